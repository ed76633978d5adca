package rest_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parityhpc/parity/scheduler/auth"
)

// TestAllocate asks for an allocation as salloc does, through POST
// job/allocate: the id comes back at once, the job is interactive (no
// batch script is run) under salloc's default name, and it lasts until
// cancelled.
func TestAllocate(t *testing.T) {
	c := startCluster(t)
	alice := c.token(t, "alice", auth.RoleUser)
	job := map[string]any{"partition": "gpu", "tasks": 1, "current_working_directory": "/tmp",
		"time_limit": map[string]any{"set": true, "number": 10}, "tres_per_node": "gres/gpu:1"}
	if a := c.do(t, "POST", "/slurm/v0.0.44/job/allocate", "", mustJSON(t, map[string]any{"job": job})); a.code != http.StatusUnauthorized {
		t.Fatalf("no token: %d %s", a.code, a.body)
	}
	a := c.do(t, "POST", "/slurm/v0.0.44/job/allocate", alice, mustJSON(t, map[string]any{"job": job}))
	id, _ := a.obj["job_id"].(float64)
	if a.code != http.StatusOK || id <= 0 {
		t.Fatalf("allocate: %d %s", a.code, a.body)
	}
	path := fmt.Sprintf("/slurm/v0.0.44/job/%d", int(id))
	j := firstJob(t, c.do(t, "GET", path, alice, nil))
	if j["batch_flag"] != false || j["name"] != "interactive" || j["user_name"] != "alice" || !slices.Equal(states(j), []string{"PENDING"}) {
		t.Errorf("allocation: batch_flag %v name %v user %v state %v", j["batch_flag"], j["name"], j["user_name"], states(j))
	}
	if a := c.do(t, "DELETE", path, alice, nil); a.code != http.StatusOK {
		t.Fatalf("cancel: %d %s", a.code, a.body)
	}
	if s := states(firstJob(t, c.do(t, "GET", path, alice, nil))); !slices.Contains(s, "CANCELLED") {
		t.Errorf("after cancel: %v", s)
	}
	for _, tt := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{}, "job is required"},
		{map[string]any{"hetjob": []any{job, job}}, "job_alloc_req.hetjob"},
		{map[string]any{"job": map[string]any{"partition": "nosuch", "tasks": 1}}, "nosuch"},
	} {
		if a := c.do(t, "POST", "/slurm/v0.0.44/job/allocate", alice, mustJSON(t, tt.body)); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), tt.want) {
			t.Errorf("%v: %d %s; want 400 naming %s", tt.body, a.code, a.body, tt.want)
		}
	}
}
