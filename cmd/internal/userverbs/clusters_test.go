package userverbs

import (
	"strings"
	"testing"
)

// -M naming this cluster submits to it. On the Slurm 22.05 anchor with
// slurmdbd (up-accounting.sh, cluster anchor): `sbatch --hold --parsable
// -M anchor j.sh` printed "4;anchor", without --parsable "Submitted batch
// job 5 on cluster anchor", SBATCH_CLUSTERS=anchor "7;anchor"; `-M
// other` exited 1 with "sbatch: error: No cluster 'other' known by
// database."
func TestSubmitToThisCluster(t *testing.T) {
	cl := startCLICluster(t)
	alice := cl.as("alice", nil)
	if out := cl.ok(alice, "sbatch", "--hold", "--parsable", "-M", "cli", "--wrap", "true"); out != "1;cli\n" {
		t.Errorf("-M cli --parsable printed %q, want \"1;cli\"", out)
	}
	if out := cl.ok(alice, "sbatch", "--hold", "--clusters=cli", "--wrap", "true"); out != "Submitted batch job 2 on cluster cli\n" {
		t.Errorf("--clusters=cli printed %q", out)
	}
	env := cl.as("alice", map[string]string{"SBATCH_CLUSTERS": "cli"})
	if out := cl.ok(env, "sbatch", "--hold", "--parsable", "--wrap", "true"); out != "3;cli\n" {
		t.Errorf("SBATCH_CLUSTERS=cli printed %q", out)
	}
	cl.fails(alice, 1, []string{"sbatch", "--hold", "-M", "other", "--wrap", "true"}, "sbatch: error: No cluster 'other' known by database.")
	if out := cl.ok(alice, "squeue", "-h", "-o", "%i"); strings.Fields(out)[len(strings.Fields(out))-1] != "3" {
		t.Errorf("a refused -M queued a job:\n%s", out)
	}
}
