package userverbs

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestExplainWithHistory(t *testing.T) {
	cl := startCLICluster(t)
	cl.register("n1", 4)
	alice, bob := cl.as("alice", nil), cl.as("bob", nil)
	cl.ok(alice, "sbatch", "--gpus-per-node=2", "--wrap", "x")
	cl.ok(alice, "scontrol", "hold", "1")
	cl.ok(alice, "scontrol", "release", "1")

	out := cl.ok(alice, "parity", "explain", "1")
	if !strings.HasPrefix(out, "Job 1 ") || !strings.Contains(out, "partition gpu") || strings.Contains(out, "Decision log") {
		t.Errorf("explain 1:\n%s", out)
	}
	out = cl.ok(alice, "parity", "explain", "--history", "1")
	_, log, ok := strings.Cut(out, "Decision log:\n")
	if !ok {
		t.Fatalf("no decision log:\n%s", out)
	}
	got := rows(log)
	if len(got) != 2 || !strings.Contains(got[0], " hold 1 - alice user") || !strings.Contains(got[1], " release 1 - alice") {
		t.Errorf("history rows = %q", got)
	}
	var js struct {
		Text    string `json:"text"`
		History []struct {
			Kind string `json:"kind"`
		} `json:"history"`
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	if err := json.Unmarshal([]byte(cl.ok(alice, "parity", "explain", "1", "--history", "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if js.Job.ID != "1" || !strings.HasPrefix(js.Text, "Job 1") || len(js.History) != 2 || js.History[0].Kind != "hold" {
		t.Errorf("explain --json = %+v", js)
	}
	// Another user's job is unknown to bob, word for word.
	cl.fails(bob, 1, []string{"parity", "explain", "1"}, "parity: explain: invalid job id specified: 1")
	cl.fails(alice, 1, []string{"parity", "explain", "x"}, "parity: explain: invalid job id \"x\"")
}
