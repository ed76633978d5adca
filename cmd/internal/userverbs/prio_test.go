package userverbs

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestPrio(t *testing.T) {
	cl := startCLICluster(t)
	alice, bob, olga := cl.as("alice", nil), cl.as("bob", nil), cl.as("olga", nil)
	cl.ok(alice, "sbatch", "--wrap", "x")
	cl.ok(bob, "sbatch", "-p", "debug", "--wrap", "x")

	out := cl.ok(olga, "sprio")
	if h := strings.Fields(strings.SplitN(out, "\n", 2)[0]); !slices.Equal(h[:3], []string{"JOBID", "PARTITION", "PRIORITY"}) {
		t.Errorf("sprio header = %q", h)
	}
	ids := func(out string) []string {
		var r []string
		for _, row := range rows(out) {
			r = append(r, strings.Fields(row)[0])
		}
		return r
	}
	if got := ids(out); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("sprio jobs = %q", got)
	}
	if got := ids(cl.ok(olga, "sprio", "-u", "bob")); !slices.Equal(got, []string{"2"}) {
		t.Errorf("sprio -u bob = %q", got)
	}
	if got := ids(cl.ok(alice, "sprio")); !slices.Equal(got, []string{"1"}) {
		t.Errorf("alice sees %q", got)
	}
	if got := ids(cl.ok(olga, "sprio", "-j", "2")); !slices.Equal(got, []string{"2"}) {
		t.Errorf("sprio -j 2 = %q", got)
	}
	if l := strings.Fields(strings.SplitN(cl.ok(olga, "sprio", "-l"), "\n", 2)[0]); !slices.Contains(l, "USER") || !slices.Contains(l, "NICE") {
		t.Errorf("sprio -l header = %q", l)
	}
	if w := rows(cl.ok(olga, "sprio", "-w")); len(w) != 1 || !strings.HasPrefix(w[0], "Weights ") {
		t.Errorf("sprio -w = %q", w)
	}
	if out := cl.ok(olga, "sprio", "-h"); strings.Contains(out, "JOBID") || len(strings.Split(strings.TrimSpace(out), "\n")) != 2 {
		t.Errorf("sprio -h = %q", out)
	}
	var js struct {
		Jobs []struct {
			JobID string `json:"jobId"`
		} `json:"jobs"`
		Weights map[string]any `json:"weights"`
	}
	if err := json.Unmarshal([]byte(cl.ok(olga, "sprio", "--json")), &js); err != nil || len(js.Jobs) != 2 || js.Weights == nil {
		t.Errorf("sprio --json = %+v, %v", js, err)
	}
}
