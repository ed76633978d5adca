package rest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/rest"
)

func fetchDocument(t *testing.T, c *cluster) []byte {
	t.Helper()
	resp, err := c.http.Get(c.base + rest.OpenAPIPath) // no token: the document is public
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != rest.ContentType {
		t.Fatalf("GET %s: %d %s: %.300s", rest.OpenAPIPath, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return body
}

func operationSet(doc *openapi3.T) map[string]bool {
	out := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out[method+" "+path] = true
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestOpenAPIDocument: the served document is a valid OpenAPI 3 document
// whose operations are exactly those the handler honours (it and the
// routes come from one table), each the contract's own operation object,
// with the contract's components.
func TestOpenAPIDocument(t *testing.T) {
	c := startCluster(t)
	body := fetchDocument(t, c)
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatalf("load the served document: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the served document is not valid OpenAPI 3: %v", err)
	}
	want := map[string]bool{"GET " + rest.OpenAPIPath: true}
	for _, k := range rest.ParityOperationKeys() {
		want[k] = true
	}
	for k, served := range rest.OperationKeys() {
		if served {
			want[k] = true
		}
	}
	if got := operationSet(doc); !reflect.DeepEqual(got, want) {
		t.Fatalf("document operations %q\nserved routes %q", keys(got), keys(want))
	}
	var served, contract struct {
		Paths      map[string]map[string]any `json:"paths"`
		Components map[string]any            `json:"components"`
	}
	raw, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, &served); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &contract); err != nil {
		t.Fatal(err)
	}
	// Slurm's schemas are served unchanged; Parity's own are beside them.
	ours, theirs := served.Components["schemas"].(map[string]any), contract.Components["schemas"].(map[string]any)
	for name, s := range theirs {
		if !reflect.DeepEqual(ours[name], s) {
			t.Errorf("the served schema %s differs from the contract's", name)
		}
	}
	for name := range ours {
		if _, slurm := theirs[name]; !slurm && !strings.HasPrefix(name, "parity_v1_") {
			t.Errorf("served schema %s is neither Slurm's nor Parity's (parity_v1_)", name)
		}
	}
	delete(served.Components, "schemas")
	delete(contract.Components, "schemas")
	if !reflect.DeepEqual(served.Components, contract.Components) {
		t.Error("the served document's components differ from the contract's")
	}
	for path, item := range served.Paths {
		for method, op := range item {
			if path != rest.OpenAPIPath && !strings.HasPrefix(path, rest.ParityPrefix) && !reflect.DeepEqual(op, contract.Paths[path][method]) {
				t.Errorf("%s %s differs from the contract's operation", method, path)
			}
		}
	}
}

// TestOpenAPIDocumentMatchesBehaviour ties the document to what the
// controller does, not to the table: every operation it lists answers
// (not 501), and every contract operation it leaves out answers 501.
func TestOpenAPIDocumentMatchesBehaviour(t *testing.T) {
	c := startCluster(t)
	doc, err := openapi3.NewLoader().LoadFromData(fetchDocument(t, c))
	if err != nil {
		t.Fatal(err)
	}
	listed := operationSet(doc)
	tok := c.token(t, "root", auth.RoleAdmin)
	c.skipRequestCheck = true // empty bodies and made-up names
	defer func() { c.skipRequestCheck = false }()
	for _, key := range keys(operationSet(c.contract.doc)) {
		method, path, _ := strings.Cut(key, " ")
		var body []byte
		if method == http.MethodPost {
			body = []byte(`{}`)
		}
		a := c.do(t, method, fill(path), tok, body)
		if unserved := a.code == http.StatusNotImplemented; unserved == listed[key] {
			t.Errorf("%s: listed %v, answered %d %s", key, listed[key], a.code, a.errorText())
		}
	}
	resp, err := c.http.Post(c.base+rest.OpenAPIPath, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotImplemented || resp.Header.Get("Allow") != "GET" {
		t.Errorf("POST %s: %d, Allow %q", rest.OpenAPIPath, resp.StatusCode, resp.Header.Get("Allow"))
	}
}
