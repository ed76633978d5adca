package userverbs

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEvents(t *testing.T) {
	cl := startCLICluster(t)
	cl.register("n1", 4)
	alice, bob, olga := cl.as("alice", nil), cl.as("bob", nil), cl.as("olga", nil)
	cl.ok(alice, "sbatch", "--wrap", "x")
	cl.ok(alice, "parity", "hold", "1")
	cl.ok(bob, "sbatch", "--wrap", "x")
	cl.ok(bob, "scancel", "2")
	cl.ok(olga, "scontrol", "update", "NodeName=n2", "State=DRAIN", "Reason=rack work")

	kinds := func(out string) []string {
		var k []string
		for _, r := range rows(out) {
			k = append(k, strings.Fields(r)[2])
		}
		return k
	}
	if got := strings.Join(kinds(cl.ok(olga, "parity", "events")), ","); got != "register,hold,cancel,drain" {
		t.Errorf("every event as an operator: %s", got)
	}
	// Users see node events and their own jobs' events.
	if got := strings.Join(kinds(cl.ok(alice, "parity", "events")), ","); got != "register,hold,drain" {
		t.Errorf("alice's events: %s", got)
	}
	drain := rows(cl.ok(olga, "parity", "events", "--kind", "drain,resume"))
	if len(drain) != 1 || !strings.HasSuffix(drain[0], " drain - n2 olga rack work") {
		t.Errorf("--kind drain = %q", drain)
	}
	if got := kinds(cl.ok(olga, "parity", "events", "--job", "2")); len(got) != 1 || got[0] != "cancel" {
		t.Errorf("--job 2 = %q", got)
	}
	if got := kinds(cl.ok(olga, "parity", "events", "--node", "n1")); len(got) != 1 || got[0] != "register" {
		t.Errorf("--node n1 = %q", got)
	}
	if got := kinds(cl.ok(olga, "parity", "events", "--limit", "2")); strings.Join(got, ",") != "drain,cancel" {
		t.Errorf("--limit 2 (newest first) = %q", got)
	}
	if got := rows(cl.ok(olga, "parity", "events", "--until", "2001-01-01")); len(got) != 0 {
		t.Errorf("--until 2001 = %q", got)
	}
	if got := rows(cl.ok(olga, "parity", "events", "--since", "1h")); len(got) != 4 {
		t.Errorf("--since 1h = %q", got)
	}
	if out := cl.ok(olga, "parity", "events", "--kind", "cancel", "-o", "%j|%a|%k", "--noheader"); out != "2|bob|cancel\n" {
		t.Errorf("-o = %q", out)
	}
	var js struct {
		Events []struct {
			Kind  string `json:"kind"`
			JobID string `json:"jobId"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(cl.ok(olga, "parity", "events", "--job", "1", "--json")), &js); err != nil || len(js.Events) != 1 || js.Events[0].Kind != "hold" {
		t.Errorf("events --json = %+v, %v", js, err)
	}
	// Another user's job has no entries for bob, as an unknown id has none.
	if got, unknown := cl.ok(bob, "parity", "events", "--job", "1"), cl.ok(bob, "parity", "events", "--job", "99"); got != unknown {
		t.Errorf("bob's events of alice's job:\n%s\nof an unknown job:\n%s", got, unknown)
	}
	cl.fails(olga, 1, []string{"parity", "events", "--since", "yesterday-ish"}, "parity: events: --since=\"yesterday-ish\"")
	cl.fails(olga, 1, []string{"parity", "events", "-o", "%Z"}, "parity: events: format")
}

// TestEventsByGPU: --gpu keeps the events about one device.
func TestEventsByGPU(t *testing.T) {
	cl := startCLICluster(t)
	cl.register("n1", 4)
	olga := cl.as("olga", nil)
	cl.ok(olga, "scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=xid 79", "Devices=2")
	cl.ok(olga, "scontrol", "update", "NodeName=n2", "State=DRAIN", "Reason=rack work")
	if got := rows(cl.ok(olga, "parity", "events", "--gpu", "GPU-n1-2")); len(got) != 1 || !strings.Contains(got[0], " drain ") || !strings.Contains(got[0], "xid 79") {
		t.Errorf("--gpu GPU-n1-2 = %q, want its drain alone", got)
	}
	if got := rows(cl.ok(olga, "parity", "events", "--gpu", "GPU-n1-0")); len(got) != 0 {
		t.Errorf("--gpu GPU-n1-0 = %q, want none", got)
	}
}
