package rest_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/rest"
)

// TestOperationsMatchDocument: the routed operations are exactly the
// document's, method for method.
func TestOperationsMatchDocument(t *testing.T) {
	ct := loadContract(t)
	want := map[string]bool{}
	for path, item := range ct.doc.Paths.Map() {
		for method := range item.Operations() {
			want[method+" "+path] = true
		}
	}
	got := rest.OperationKeys()
	var missing, extra []string
	for k := range want {
		if _, ok := got[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing)+len(extra) > 0 || len(ct.doc.Paths.Map()) != 41 {
		t.Fatalf("paths %d (want 41); not routed: %q; routed but not in the document: %q", len(ct.doc.Paths.Map()), missing, extra)
	}
}

// fill gives a path's parameters values that name nothing in the lab.
func fill(path string) string {
	r := strings.NewReplacer("{job_id}", "999", "{node_name}", "nosuch", "{partition_name}", "nosuch",
		"{reservation_name}", "r1", "{qos}", "normal", "{name}", "alice", "{cluster_name}", "lab", "{id}", "1",
		"{account_name}", "a1")
	return r.Replace(path)
}

// TestEveryOperationAnswersInSchema calls every operation of the document
// as an admin: each answers in its own schema (checked by do), and the
// ones Parity does not honour say so with 501 and a message, never 404.
func TestEveryOperationAnswersInSchema(t *testing.T) {
	c := startCluster(t)
	tok := c.token(t, "root", auth.RoleAdmin)
	for key, served := range rest.OperationKeys() {
		method, path, _ := strings.Cut(key, " ")
		t.Run(key, func(t *testing.T) {
			var body []byte
			if method == http.MethodPost {
				body = []byte(`{}`)
			}
			c.skipRequestCheck = true // empty bodies and made-up names
			a := c.do(t, method, fill(path), tok, body)
			c.skipRequestCheck = false
			if served {
				if a.code == http.StatusNotImplemented {
					t.Fatalf("served operation answered 501: %s", a.body)
				}
				return
			}
			if a.code != http.StatusNotImplemented || !strings.Contains(a.errorText(), key+": ") {
				t.Fatalf("unserved operation: %d %s; want 501 naming it", a.code, a.body)
			}
		})
	}
}

// TestPathsOutsideTheDocument: unknown paths and methods get the envelope.
func TestPathsOutsideTheDocument(t *testing.T) {
	c := startCluster(t)
	tok := c.token(t, "alice", auth.RoleUser)
	tests := []struct {
		method, path string
		code         int
		want         string
	}{
		{"GET", "/slurm/v0.0.44/nosuch", http.StatusNotFound, "no such path"},
		{"GET", "/slurm/v0.0.40/jobs/", http.StatusNotFound, "Parity serves only /slurm/v0.0.44/"},
		{"GET", "/slurmdb/v0.0.44/", http.StatusNotFound, "no such path"},
		{"PUT", "/slurm/v0.0.44/jobs/", http.StatusNotImplemented, "method not allowed (the document has DELETE, GET)"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			c.skipRequestCheck = true
			a := c.do(t, tt.method, tt.path, tok, nil)
			c.skipRequestCheck = false
			if a.code != tt.code || !strings.Contains(a.errorText(), tt.want) {
				t.Fatalf("%d %s; want %d with %q", a.code, a.body, tt.code, tt.want)
			}
		})
	}
}

// TestValidatorRejects guards the checks above: answers that break the
// document (a required property missing, a state outside the enum, a
// wrong type) are refused by the validator the tests use.
func TestValidatorRejects(t *testing.T) {
	ct := loadContract(t)
	for _, body := range []string{
		`{"last_backfill":{},"last_update":{}}`,
		`{"jobs":[{"job_state":["NOPE"]}],"last_backfill":{},"last_update":{}}`,
		`{"jobs":[{"job_id":"1"}],"last_backfill":{},"last_update":{}}`,
	} {
		req, _ := http.NewRequest("GET", "/slurm/v0.0.44/jobs/", nil)
		in := ct.requestInput(t, req, nil)
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: 200,
			Header: http.Header{"Content-Type": {"application/json"}}}
		out.SetBodyBytes([]byte(body))
		if err := openapi3filter.ValidateResponse(context.Background(), out); err == nil {
			t.Errorf("validator accepted %s", body)
		}
	}
}
