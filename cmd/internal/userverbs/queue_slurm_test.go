package userverbs

import (
	"slices"
	"strings"
	"testing"
)

// squeue -j with one id the controller does not know (or another user's,
// which it answers alike) fails as Slurm's does; anything else it cannot
// show is an empty table, exit 0.
func TestQueueUnknownJobID(t *testing.T) {
	cl := startCLICluster(t)
	alice, bob := cl.as("alice", nil), cl.as("bob", nil)
	cl.ok(alice, "sbatch", "-J", "one", "--wrap", "x")
	cl.ok(alice, "sbatch", "-J", "two", "--wrap", "x")
	cl.ok(alice, "scancel", "2")

	cl.fails(alice, 1, []string{"squeue", "-j", "99"}, "slurm_load_jobs error: Invalid job id specified")
	cl.fails(alice, 1, []string{"squeue", "-h", "-j", "99", "-o", "%i"}, "slurm_load_jobs error: Invalid job id specified")
	if out, _, _ := runCLI(alice, "squeue", "-j", "99"); out != "" {
		t.Errorf("squeue -j 99 printed %q", out)
	}
	// Someone else's job is unknown to bob, as an id never used is:
	// the answer must not confirm it exists.
	cl.fails(bob, 1, []string{"squeue", "-j", "1"}, "slurm_load_jobs error: Invalid job id specified")
	cases := []struct {
		who  string
		argv []string
		want []string // rows after the header
	}{
		{"alice", []string{"squeue", "-j", "1", "-o", "%i %t"}, []string{"1 PD"}},
		// Known, but filtered out: Slurm prints the header alone.
		{"alice", []string{"squeue", "-j", "1", "-t", "R"}, nil},
		// Finished but still known: listed, as squeue -j does.
		{"alice", []string{"squeue", "-j", "2", "-o", "%i %t"}, []string{"2 CA"}},
		// Several ids: the header alone, as Slurm, even when none exists.
		{"alice", []string{"squeue", "-j", "98,99"}, nil},
	}
	for _, c := range cases {
		env := map[string]userEnv{"alice": alice, "bob": bob}[c.who]
		out, errs, code := runCLI(env, c.argv...)
		if code != 0 || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "JOBID") {
			t.Errorf("%s %q: exit %d, stdout %q, stderr %q", c.who, c.argv, code, out, errs)
			continue
		}
		if got := rows(out); !slices.Equal(got, c.want) {
			t.Errorf("%s %q: rows %q, want %q", c.who, c.argv, got, c.want)
		}
	}
}
