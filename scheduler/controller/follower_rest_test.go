package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// checkFollowerSlurmAnswer asks follower a slurmrestd path and wants what a
// slurmrestd client can parse: 503, the leader named in LeaderHeader and in
// the message, and a body valid in the operation's own schema of Slurm's
// document (errors, warnings, meta), not /v1's JSON error.
func checkFollowerSlurmAnswer(t *testing.T, follower, lead, path string) {
	t.Helper()
	resp, err := http.Get("http://" + follower + path)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get(LeaderHeader) != lead {
		t.Fatalf("follower %s GET %s: %d %s=%q, want 503 naming %s", follower, path, resp.StatusCode, LeaderHeader, resp.Header.Get(LeaderHeader), lead)
	}
	if msg := slurmErrorAnswer(t, path, resp, body); !strings.Contains(msg, "the leader is "+lead) {
		t.Fatalf("follower GET %s: want the error naming leader %s: %s", path, lead, body)
	}
}

// slurmErrorAnswer validates a GET's answer against Slurm's document and
// returns the description of its one error (with a meta beside it).
func slurmErrorAnswer(t *testing.T, path string, resp *http.Response, body []byte) string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("../rest/contract/slurm-openapi-v0.0.44.json")
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = openapi3.Servers{{URL: "/"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, path, nil)
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s not in the document: %v", path, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Fatalf("GET %s: answer breaks Slurm's document: %v\n%s", path, err, body)
	}
	var env struct {
		Errors []struct {
			Description string `json:"description"`
		} `json:"errors"`
		Meta map[string]any `json:"meta"`
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&env); err != nil {
		t.Fatal(err)
	}
	if len(env.Errors) != 1 || env.Meta == nil {
		t.Fatalf("GET %s: want one error and a meta: %s", path, body)
	}
	return env.Errors[0].Description
}
