package userverbs

import (
	"encoding/json"
	"testing"
)

// holdOf reads a job's state and hold through show --json (v0.0.44:
// hold is a boolean, the kind of hold its state_reason).
func holdOf(t *testing.T, cl *cliCluster, env userEnv, id string) (state, hold string) {
	t.Helper()
	var js struct {
		Jobs []struct {
			State  []string `json:"job_state"`
			Hold   bool     `json:"hold"`
			Reason string   `json:"state_reason"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(cl.ok(env, "parity", "show", "job", id, "--json")), &js); err != nil || len(js.Jobs) != 1 {
		t.Fatalf("show job %s --json: %v", id, err)
	}
	j := js.Jobs[0]
	switch {
	case !j.Hold:
	case j.Reason == "JobHeldAdmin":
		hold = "admin"
	case j.Reason == "JobHeldUser":
		hold = "user"
	default:
		t.Fatalf("job %s held with reason %q", id, j.Reason)
	}
	return j.State[0], hold
}

func TestHoldReleaseRequeue(t *testing.T) {
	cl := startCLICluster(t)
	alice, olga := cl.as("alice", nil), cl.as("olga", nil)
	cl.ok(alice, "sbatch", "--wrap", "a")
	cl.ok(alice, "sbatch", "--hold", "--wrap", "b")

	if _, h := holdOf(t, cl, alice, "2"); h != "user" {
		t.Errorf("sbatch --hold: hold=%q", h)
	}
	cl.ok(alice, "scontrol", "hold", "1")
	if _, h := holdOf(t, cl, alice, "1"); h != "user" {
		t.Errorf("scontrol hold: hold=%q", h)
	}
	cl.ok(alice, "parity", "release", "1,2")
	for _, id := range []string{"1", "2"} {
		if _, h := holdOf(t, cl, alice, id); h != "" {
			t.Errorf("released job %s still held (%q)", id, h)
		}
	}
	// An operator's hold on someone else's job is an admin hold.
	cl.ok(olga, "parity", "hold", "1")
	if _, h := holdOf(t, cl, alice, "1"); h != "admin" {
		t.Errorf("operator hold = %q", h)
	}
	cl.fails(alice, 1, []string{"scontrol", "release", "JobId=1"}, "scontrol: error: job 1: access/permission denied: job 1 is held by an administrator", "hint:")
	cl.ok(olga, "scontrol", "release", "1")
	cl.fails(alice, 1, []string{"parity", "release", "1"}, "parity: release: job 1 is not held")
	// Several ids: each failure is reported, the status is non-zero.
	cl.fails(alice, 1, []string{"parity", "hold", "1,7,8"}, "parity: hold: job 7: invalid job id specified: 7", "parity: hold: job 8:")
	if _, h := holdOf(t, cl, alice, "1"); h != "user" {
		t.Errorf("hold 1,7,8 did not hold job 1 (%q)", h)
	}
	// A pending job is not requeued: the controller's words (Slurm's among them), verbatim.
	cl.fails(alice, 1, []string{"scontrol", "requeuehold", "2"}, "scontrol: error: job 2 is PENDING: Job is pending execution; only running, suspended or ended batch jobs can be requeued")
	cl.fails(alice, 1, []string{"parity", "requeue", "--hold", "2"}, "Job is pending execution")
	cl.fails(alice, 1, []string{"parity", "hold", "20_3"}, "parity: hold: job 20_3: invalid job id specified: 20")
}

func TestSuspendResumeVerbs(t *testing.T) {
	cl := startCLICluster(t)
	alice, olga := cl.as("alice", nil), cl.as("olga", nil)
	cl.ok(alice, "sbatch", "--wrap", "a")
	cl.fails(alice, 1, []string{"scontrol", "suspend", "1"}, "scontrol: error: job 1: access/permission denied: scontrol suspend needs an operator or admin")
	cl.fails(olga, 1, []string{"parity", "suspend", "1"}, "parity: suspend: job 1 is PENDING; only running jobs can be suspended")
	cl.fails(olga, 1, []string{"scontrol", "resume", "JobId=1"}, "scontrol: error: job 1 is PENDING; only suspended jobs can be resumed")
	cl.fails(olga, 1, []string{"parity", "resume", "x"}, `invalid job id "x"`)
}
