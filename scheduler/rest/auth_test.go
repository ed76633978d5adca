package rest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
)

// TestAuthorisationMatrix runs the gRPC rules over REST: owner, other
// user, operator, admin, no token, bad and expired tokens, and a user
// name that is not the token's.
func TestAuthorisationMatrix(t *testing.T) {
	c := startCluster(t)
	alice := c.token(t, "alice", auth.RoleUser)
	id := c.submit(t, alice, "mine")
	expired, err := auth.Sign(c.ctrl.Key(), auth.Claims{User: "alice", Role: auth.RoleUser, IssuedAt: time.Now().Add(-2 * time.Hour), Expires: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	bob, op, root := c.token(t, "bob", auth.RoleUser), c.token(t, "op", auth.RoleUser), c.token(t, "root", auth.RoleUser)
	job := fmt.Sprintf("/slurm/v0.0.44/job/%d", id)
	drain := []byte(`{"state":["DRAIN"],"reason":"test"}`)
	tests := []struct {
		name, method, path string
		headers            map[string]string
		body               []byte
		code               int
		want               string
	}{
		{"owner reads", "GET", job, map[string]string{"X-SLURM-USER-TOKEN": alice}, nil, 200, ""},
		{"owner by bearer", "GET", job, map[string]string{"Authorization": "Bearer " + alice}, nil, 200, ""},
		{"owner with her user name", "GET", job, map[string]string{"X-SLURM-USER-TOKEN": alice, "X-SLURM-USER-NAME": "alice"}, nil, 200, ""},
		{"other user: not found", "GET", job, map[string]string{"X-SLURM-USER-TOKEN": bob}, nil, 404, "invalid job id"},
		{"other user cannot cancel", "DELETE", job, map[string]string{"X-SLURM-USER-TOKEN": bob}, nil, 404, "invalid job id"},
		{"other user cannot update", "POST", job, map[string]string{"X-SLURM-USER-TOKEN": bob}, []byte(`{"name":"x"}`), 404, "invalid job id"},
		{"operator reads", "GET", job, map[string]string{"X-SLURM-USER-TOKEN": op}, nil, 200, ""},
		{"admin reads", "GET", job, map[string]string{"X-SLURM-USER-TOKEN": root}, nil, 200, ""},
		{"user cannot drain", "POST", "/slurm/v0.0.44/node/n1", map[string]string{"X-SLURM-USER-TOKEN": alice}, drain, 403, "needs an operator"},
		{"operator drains", "POST", "/slurm/v0.0.44/node/n1", map[string]string{"X-SLURM-USER-TOKEN": op}, drain, 200, ""},
		{"no token", "GET", "/slurm/v0.0.44/jobs/", nil, nil, 401, "no token"},
		{"no token on an unserved path", "GET", "/slurm/v0.0.44/reconfigure/", nil, nil, 401, "no token"},
		{"bad token", "GET", "/slurm/v0.0.44/jobs/", map[string]string{"X-SLURM-USER-TOKEN": "pt1.garbage"}, nil, 401, "authentication failure"},
		{"expired token", "GET", "/slurm/v0.0.44/ping/", map[string]string{"X-SLURM-USER-TOKEN": expired}, nil, 401, "expired"},
		{"not the token's user", "GET", job, map[string]string{"X-SLURM-USER-TOKEN": alice, "X-SLURM-USER-NAME": "bob"}, nil, 403, "does not match"},
		{"owner explains", "GET", "/parity/v1/explain/" + fmt.Sprint(id), map[string]string{"X-SLURM-USER-TOKEN": alice}, nil, 200, ""},
		{"other user cannot explain", "GET", "/parity/v1/explain/" + fmt.Sprint(id), map[string]string{"X-SLURM-USER-TOKEN": bob}, nil, 404, "invalid job id"},
		{"no token for the decision log", "GET", "/parity/v1/events", nil, nil, 401, "no token"},
		{"expired token for GPUs", "GET", "/parity/v1/gpus", map[string]string{"X-SLURM-USER-TOKEN": expired}, nil, 401, "expired"},
		{"no token for conformance", "GET", "/parity/v1/conformance/latest", nil, nil, 401, "no token"},
		{"a user name without a token", "GET", job, map[string]string{"X-SLURM-USER-NAME": "alice"}, nil, 401, "no token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := c.doHeaders(t, tt.method, tt.path, tt.body, tt.headers)
			if a.code != tt.code || !strings.Contains(a.errorText(), tt.want) {
				t.Fatalf("%d %s; want %d with %q", a.code, a.body, tt.code, tt.want)
			}
			if tt.code == http.StatusNotFound {
				if n := a.obj["errors"].([]any)[0].(map[string]any)["error_number"]; n != 2017.0 {
					t.Errorf("error_number %v, want 2017 (ESLURM_INVALID_JOB_ID)", n)
				}
			}
			if tt.code == http.StatusOK && a.errorText() != "" {
				t.Fatalf("success with errors: %s", a.body)
			}
		})
	}
}

// TestBadInput: each malformed request gets the envelope with a message
// naming what was wrong, and changes nothing.
func TestBadInput(t *testing.T) {
	c := startCluster(t)
	alice := c.token(t, "alice", auth.RoleUser)
	id := c.submit(t, alice, "keep")
	job := fmt.Sprintf("/slurm/v0.0.44/job/%d", id)
	huge := `{"script":"` + strings.Repeat("x", 2<<20) + `","job":{}}`
	tests := []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"malformed JSON", "POST", "/slurm/v0.0.44/job/submit", `{"job":`, 400, "malformed JSON"},
		{"not an object", "POST", "/slurm/v0.0.44/job/submit", `[1,2]`, 400, "job_submit_req"},
		{"unknown top-level field", "POST", "/slurm/v0.0.44/job/submit", `{"job":{},"scirpt":"x"}`, 400, `field "scirpt" is not a property`},
		{"unknown job field", "POST", "/slurm/v0.0.44/job/submit", `{"script":"#!/bin/sh\n","job":{"time_limt":5}}`, 400, `field "time_limt" is not a property`},
		{"wrong type", "POST", "/slurm/v0.0.44/job/submit", `{"script":"#!/bin/sh\n","job":{"tasks":"two"}}`, 400, `job.tasks: got a JSON string, want an integer`},
		{"wrong no_val type", "POST", "/slurm/v0.0.44/job/submit", `{"script":"#!/bin/sh\n","job":{"time_limit":{"number":"x"}}}`, 400, `job.time_limit: want {set, infinite, number}: field "number": got a JSON string`},
		{"no script", "POST", "/slurm/v0.0.44/job/submit", `{"job":{"name":"x"}}`, 400, "needs a script"},
		{"bad tres", "POST", "/slurm/v0.0.44/job/submit", `{"script":"#!/bin/sh\n","job":{"tres_per_node":"gpu"}}`, 400, "tres_per_node"},
		{"invalid UTF-8", "POST", "/slurm/v0.0.44/job/submit", "{\"script\":\"\xff\xfe\",\"job\":{}}", 400, "not valid UTF-8"},
		{"trailing data", "POST", "/slurm/v0.0.44/job/submit", `{"job":{}} {}`, 400, "data after the JSON object"},
		{"huge body", "POST", "/slurm/v0.0.44/job/submit", huge, 413, "over 1048576 bytes"},
		{"empty body", "POST", job, ``, 400, "empty request body"},
		{"update of what Parity cannot change", "POST", job, `{"name":"new","priority":{"set":true,"number":5}}`, 400, `"priority" cannot be changed`},
		{"bad job id", "GET", "/slurm/v0.0.44/job/abc", "", 400, `job_id="abc"`},
		{"bad update_time", "GET", "/slurm/v0.0.44/jobs/?update_time=yesterday", "", 400, "update_time"},
		{"bad flags", "GET", "/slurm/v0.0.44/jobs/?flags=EVERYTHING", "", 400, "flags"},
		{"bad signal", "DELETE", job + "?signal=NOPE", "", 400, `signal="NOPE"`},
		{"bad node state", "POST", "/slurm/v0.0.44/node/n1", `{"state":["DRAIN","IDLE"]}`, 400, "exactly one state"},
	}
	c.skipRequestCheck = true
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.method == "POST" {
				body = []byte(tt.body)
			}
			a := c.do(t, tt.method, tt.path, alice, body)
			if a.code != tt.code || !strings.Contains(a.errorText(), tt.want) {
				t.Fatalf("%d %s; want %d with %q", a.code, a.body, tt.code, tt.want)
			}
		})
	}
	c.skipRequestCheck = false
	j := firstJob(t, c.do(t, "GET", job, alice, nil))
	if j["name"] != "keep" || states(j)[0] != "PENDING" {
		t.Fatalf("a refused request changed the job: name %v state %v", j["name"], j["job_state"])
	}
	if jobs := c.do(t, "GET", "/slurm/v0.0.44/jobs/", alice, nil).obj["jobs"].([]any); len(jobs) != 1 {
		t.Fatalf("refused submissions queued jobs: %d jobs", len(jobs))
	}
}
