package rest_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/parityhpc/parity/scheduler/auth"
)

func submitBody(name string) map[string]any {
	return map[string]any{
		"script": "#!/bin/sh\nhostname\n",
		"job": map[string]any{
			"name": name, "partition": "gpu", "current_working_directory": "/tmp",
			"environment": []string{"PATH=/bin:/usr/bin"}, "tasks": 2, "cpus_per_task": 2,
			"time_limit":      map[string]any{"set": true, "infinite": false, "number": 30},
			"memory_per_node": map[string]any{"set": true, "infinite": false, "number": 1024},
			"tres_per_node":   "gres/gpu:h100:1",
		},
	}
}

func (c *cluster) submit(t *testing.T, tok, name string) int {
	t.Helper()
	a := c.do(t, "POST", "/slurm/v0.0.44/job/submit", tok, mustJSON(t, submitBody(name)))
	id, _ := a.obj["job_id"].(float64)
	if a.code != http.StatusOK || id <= 0 {
		t.Fatalf("submit: %d %s", a.code, a.body)
	}
	return int(id)
}

func firstJob(t *testing.T, a answer) map[string]any {
	t.Helper()
	jobs, _ := a.obj["jobs"].([]any)
	if a.code != http.StatusOK || len(jobs) != 1 {
		t.Fatalf("want one job: %d %s", a.code, a.body)
	}
	return jobs[0].(map[string]any)
}

func states(j map[string]any) []string {
	var out []string
	for _, s := range j["job_state"].([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestJobLifecycle drives submit, list, get, update, hold, release and
// cancel through the REST paths, as a slurmrestd client would.
func TestJobLifecycle(t *testing.T) {
	c := startCluster(t)
	alice := c.token(t, "alice", auth.RoleUser)
	id := c.submit(t, alice, "first")
	job := fmt.Sprintf("/slurm/v0.0.44/job/%d", id)

	j := firstJob(t, c.do(t, "GET", job, alice, nil))
	want := map[string]any{"name": "first", "partition": "gpu", "user_name": "alice", "tres_per_node": "gres/gpu:h100:1",
		"current_working_directory": "/tmp"}
	for k, v := range want {
		if j[k] != v {
			t.Errorf("job %s = %v, want %v", k, j[k], v)
		}
	}
	if tl := j["time_limit"].(map[string]any); tl["number"] != 30.0 || tl["set"] != true {
		t.Errorf("time_limit %v, want 30 minutes", tl)
	}
	if !slices.Equal(states(j), []string{"PENDING"}) {
		t.Errorf("job_state %v, want [PENDING]", states(j))
	}

	list := c.do(t, "GET", "/slurm/v0.0.44/jobs/?flags=DETAIL", alice, nil)
	if jobs := list.obj["jobs"].([]any); len(jobs) != 1 {
		t.Fatalf("jobs: %s", list.body)
	}
	future := c.do(t, "GET", "/slurm/v0.0.44/jobs/?update_time=4102444800", alice, nil)
	if jobs := future.obj["jobs"].([]any); len(jobs) != 0 {
		t.Errorf("jobs updated after 2100: %d, want 0", len(jobs))
	}

	upd := c.do(t, "POST", job, alice, mustJSON(t, map[string]any{"name": "renamed", "time_limit": map[string]any{"set": true, "number": 20}, "hold": true}))
	if upd.code != http.StatusOK {
		t.Fatalf("update: %d %s", upd.code, upd.body)
	}
	j = firstJob(t, c.do(t, "GET", job, alice, nil))
	if j["name"] != "renamed" || j["hold"] != true || j["time_limit"].(map[string]any)["number"] != 20.0 {
		t.Errorf("after update: name %v hold %v time_limit %v", j["name"], j["hold"], j["time_limit"])
	}
	if a := c.do(t, "POST", job, alice, mustJSON(t, map[string]any{"hold": false})); a.code != http.StatusOK {
		t.Fatalf("release: %d %s", a.code, a.body)
	}

	st := c.do(t, "GET", fmt.Sprintf("/slurm/v0.0.44/jobs/state/?job_id=%d", id), alice, nil)
	if s := states(firstJob(t, st)); !slices.Equal(s, []string{"PENDING"}) {
		t.Errorf("jobs/state %v", s)
	}

	if a := c.do(t, "DELETE", job+"?signal=KILL&flags=FULL_JOB", alice, nil); a.code != http.StatusOK {
		t.Fatalf("cancel: %d %s", a.code, a.body)
	}
	j = firstJob(t, c.do(t, "GET", job, alice, nil))
	if !slices.Contains(states(j), "CANCELLED") {
		t.Errorf("after DELETE: job_state %v, want CANCELLED", states(j))
	}
}

// TestNodesAndPartitions reads nodes and partitions and drains and
// resumes a node with a reason.
func TestNodesAndPartitions(t *testing.T) {
	c := startCluster(t)
	op := c.token(t, "op", auth.RoleUser) // an operator by the cluster file
	nodes := c.do(t, "GET", "/slurm/v0.0.44/nodes/", op, nil)
	if n := nodes.obj["nodes"].([]any); len(n) != 2 {
		t.Fatalf("nodes: %s", nodes.body)
	}
	n1 := c.do(t, "GET", "/slurm/v0.0.44/node/n1", op, nil).obj["nodes"].([]any)[0].(map[string]any)
	if n1["name"] != "n1" || n1["cpus"] != 16.0 || n1["real_memory"] != 65536.0 {
		t.Errorf("node n1: name %v cpus %v real_memory %v", n1["name"], n1["cpus"], n1["real_memory"])
	}
	drain := c.do(t, "POST", "/slurm/v0.0.44/node/n1", op, mustJSON(t, map[string]any{"state": []string{"DRAIN"}, "reason": "fan"}))
	if drain.code != http.StatusOK {
		t.Fatalf("drain: %d %s", drain.code, drain.body)
	}
	n1 = c.do(t, "GET", "/slurm/v0.0.44/node/n1", op, nil).obj["nodes"].([]any)[0].(map[string]any)
	if !slices.Contains(n1["state"].([]any), any("DRAIN")) || n1["reason"] != "fan" || n1["reason_set_by_user"] != "op" {
		t.Errorf("after drain: state %v reason %v by %v", n1["state"], n1["reason"], n1["reason_set_by_user"])
	}
	if a := c.do(t, "POST", "/slurm/v0.0.44/node/n1", op, mustJSON(t, map[string]any{"state": []string{"RESUME"}})); a.code != http.StatusOK {
		t.Fatalf("resume: %d %s", a.code, a.body)
	}
	n1 = c.do(t, "GET", "/slurm/v0.0.44/node/n1", op, nil).obj["nodes"].([]any)[0].(map[string]any)
	if slices.Contains(n1["state"].([]any), any("DRAIN")) {
		t.Errorf("after resume: state %v", n1["state"])
	}
	parts := c.do(t, "GET", "/slurm/v0.0.44/partitions/", op, nil)
	p := parts.obj["partitions"].([]any)
	if len(p) != 1 || p[0].(map[string]any)["name"] != "gpu" {
		t.Fatalf("partitions: %s", parts.body)
	}
	if a := c.do(t, "GET", "/slurm/v0.0.44/partition/gpu", op, nil); len(a.obj["partitions"].([]any)) != 1 {
		t.Fatalf("partition gpu: %s", a.body)
	}
	if a := c.do(t, "GET", "/slurm/v0.0.44/partition/nosuch", op, nil); a.code != http.StatusNotFound || !strings.Contains(a.errorText(), "nosuch") {
		t.Fatalf("partition nosuch: %d %s", a.code, a.body)
	}
	for _, p := range []string{"/slurm/v0.0.44/ping/", "/slurm/v0.0.44/ping", "/slurm/v0.0.44/diag/"} {
		if a := c.do(t, "GET", p, op, nil); a.code != http.StatusOK {
			t.Fatalf("%s: %d %s", p, a.code, a.body)
		}
	}
}
