package rest_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
)

func warningText(a answer) string {
	ws, _ := a.obj["warnings"].([]any)
	var out []string
	for _, w := range ws {
		d, _ := w.(map[string]any)["description"].(string)
		out = append(out, d)
	}
	return strings.Join(out, "; ")
}

// TestReconfigure reads the cluster file again through GET reconfigure/:
// admins only; a new partition is applied and named; a bad file changes
// nothing and says why.
func TestReconfigure(t *testing.T) {
	file := clusterYAML
	c := startClusterWith(t, func(o *controller.Options) {
		o.LoadConfig = func() (*config.Cluster, error) { return config.Parse("lab.yaml", []byte(file)) }
	})
	alice, root := c.token(t, "alice", auth.RoleUser), c.token(t, "root", auth.RoleAdmin)
	if a := c.do(t, "GET", "/slurm/v0.0.44/reconfigure/", alice, nil); a.code != http.StatusForbidden {
		t.Fatalf("alice reconfigures: %d %s", a.code, a.body)
	}
	file = strings.Replace(clusterYAML, "partitions:\n", "partitions:\n  - name: short\n    nodes: n1\n", 1)
	a := c.do(t, "GET", "/slurm/v0.0.44/reconfigure/", root, nil)
	if a.code != http.StatusOK || !strings.Contains(warningText(a), "short") {
		t.Fatalf("reconfigure: %d %s; want 200 naming partition short", a.code, a.body)
	}
	if p := c.do(t, "GET", "/slurm/v0.0.44/partition/short", root, nil); p.code != http.StatusOK {
		t.Fatalf("partition short after reconfigure: %d %s", p.code, p.body)
	}
	file = "cluster: [broken"
	if a := c.do(t, "GET", "/slurm/v0.0.44/reconfigure/", root, nil); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), "nothing changed") {
		t.Fatalf("bad file: %d %s", a.code, a.body)
	}
	if p := c.do(t, "GET", "/slurm/v0.0.44/partition/short", root, nil); p.code != http.StatusOK {
		t.Fatalf("partition short after a bad file: %d %s", p.code, p.body)
	}
}

// TestNodesBatchUpdate drains and resumes several nodes named in the body
// of POST nodes/, as scontrol update NodeName=n[1-2] does.
func TestNodesBatchUpdate(t *testing.T) {
	c := startCluster(t)
	op, alice := c.token(t, "op", auth.RoleUser), c.token(t, "alice", auth.RoleUser)
	drain := mustJSON(t, map[string]any{"name": []string{"n[1-2]"}, "state": []string{"DRAIN"}, "reason": "rack"})
	if a := c.do(t, "POST", "/slurm/v0.0.44/nodes/", alice, drain); a.code != http.StatusForbidden {
		t.Fatalf("alice drains: %d %s", a.code, a.body)
	}
	if a := c.do(t, "POST", "/slurm/v0.0.44/nodes/", op, drain); a.code != http.StatusOK {
		t.Fatalf("drain: %d %s", a.code, a.body)
	}
	for _, n := range c.do(t, "GET", "/slurm/v0.0.44/nodes/", op, nil).obj["nodes"].([]any) {
		m := n.(map[string]any)
		if !slices.Contains(m["state"].([]any), any("DRAIN")) || m["reason"] != "rack" {
			t.Errorf("node %v after drain: state %v reason %v", m["name"], m["state"], m["reason"])
		}
	}
	tests := []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"state": []string{"RESUME"}}, "update_node_msg.name"},
		{map[string]any{"name": []string{"n1"}, "state": []string{"RESUME", "DRAIN"}}, "exactly one state"},
		{map[string]any{"name": []string{"n1"}, "state": []string{"RESUME"}, "weight": map[string]any{"set": true, "number": 3}}, `"weight"`},
	}
	for _, tt := range tests {
		if a := c.do(t, "POST", "/slurm/v0.0.44/nodes/", op, mustJSON(t, tt.body)); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), tt.want) {
			t.Errorf("%v: %d %s; want 400 naming %s", tt.body, a.code, a.body, tt.want)
		}
	}
}

// TestJobsDelete is scancel through DELETE jobs/: named jobs, filters
// (a user's filters select only their own jobs), refusals per job in the
// envelope, and bad requests refused whole.
func TestJobsDelete(t *testing.T) {
	c := startCluster(t)
	alice, bob, op := c.token(t, "alice", auth.RoleUser), c.token(t, "bob", auth.RoleUser), c.token(t, "op", auth.RoleUser)
	a1, a2, b1 := c.submit(t, alice, "a1"), c.submit(t, alice, "a2"), c.submit(t, bob, "b1")
	state := func(id int) []string {
		return states(firstJob(t, c.do(t, "GET", fmt.Sprintf("/slurm/v0.0.44/job/%d", id), op, nil)))
	}
	del := func(tok string, body map[string]any) answer {
		return c.do(t, "DELETE", "/slurm/v0.0.44/jobs/", tok, mustJSON(t, body))
	}
	for _, tt := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{}, "no job identification"},
		{map[string]any{"qos": "high"}, `"qos"`},
		{map[string]any{"jobs": []string{"x"}}, "kill_jobs_msg.jobs[0]"},
		{map[string]any{"jobs": []string{fmt.Sprint(a1)}, "signal": "NOPE"}, "kill_jobs_msg.signal"},
		{map[string]any{"jobs": []string{fmt.Sprint(a1)}, "flags": []string{"HURRY"}}, "flags=HURRY"},
	} {
		if a := del(alice, tt.body); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), tt.want) {
			t.Errorf("%v: %d %s; want 400 naming %s", tt.body, a.code, a.body, tt.want)
		}
	}
	if s := state(a1); !slices.Equal(s, []string{"PENDING"}) {
		t.Fatalf("a refused request changed job %d: %v", a1, s)
	}

	if a := del(alice, map[string]any{"jobs": []string{fmt.Sprint(b1)}}); a.code == http.StatusOK || !strings.Contains(a.errorText(), fmt.Sprintf("job %d", b1)) {
		t.Errorf("alice cancels bob's job: %d %s", a.code, a.body)
	}
	if a := del(alice, map[string]any{"jobs": []string{fmt.Sprint(a1)}, "signal": "KILL"}); a.code != http.StatusOK {
		t.Fatalf("cancel a1: %d %s", a.code, a.body)
	}
	if a := del(alice, map[string]any{"partition": "gpu"}); a.code != http.StatusOK {
		t.Fatalf("cancel by partition: %d %s", a.code, a.body)
	}
	for id, want := range map[int]string{a1: "CANCELLED", a2: "CANCELLED", b1: "PENDING"} {
		if s := state(id); !slices.Contains(s, want) {
			t.Errorf("job %d: %v, want %s", id, s, want)
		}
	}
}
