package controller

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// endJob reports a job's end on c1 with the exit code.
func (h *harness) endJob(id uint64, exit int32) {
	h.t.Helper()
	if err := h.agent("c1").JobEnded(context.Background(), &pb.JobEndedRequest{Node: "c1", JobId: id, ExitCode: exit}); err != nil {
		h.t.Fatal(err)
	}
}

func states(h *harness, ids ...uint64) string {
	var out []string
	for _, id := range ids {
		j := h.job(id)
		s := j.GetState()
		if s == StatePending {
			s += "(" + j.GetReason() + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestAfterOKPipeline(t *testing.T) {
	tests := []struct {
		name      string
		cluster   string
		firstExit int32
		want      []string // states of the three stages after each step
	}{
		{"in order", testCluster, 0, []string{
			"RUNNING PENDING(Dependency) PENDING(Dependency)",
			"COMPLETED RUNNING PENDING(Dependency)",
			"COMPLETED COMPLETED RUNNING"}},
		{"first fails", testCluster, 1, []string{
			"RUNNING PENDING(Dependency) PENDING(Dependency)",
			"FAILED PENDING(DependencyNeverSatisfied) PENDING(DependencyNeverSatisfied)"}},
		{"first fails, killInvalidDepend", testCluster + "scheduler:\n  killInvalidDepend: true\n", 1, []string{
			"RUNNING PENDING(Dependency) PENDING(Dependency)",
			"FAILED CANCELLED CANCELLED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startController(t, tt.cluster)
			h.registerCPU(16)
			alice := h.as("alice", auth.RoleUser)
			one := h.submit(alice, cpuTask("one", ""))
			s2 := cpuTask("two", "")
			s2.Dependency = "afterok:1"
			two := h.submit(alice, s2)
			s3 := cpuTask("three", "")
			s3.Dependency = "afterok:2"
			three := h.submit(alice, s3)
			for step, want := range tt.want {
				h.pass()
				if got := states(h, one, two, three); got != want {
					t.Fatalf("step %d: %s, want %s", step, got, want)
				}
				for _, id := range []uint64{one, two, three} {
					if h.job(id).GetState() == StateRunning {
						exit := int32(0)
						if id == one {
							exit = tt.firstExit
						}
						h.endJob(id, exit)
					}
				}
			}
		})
	}
}

func TestDependencySubmitChecksAndSingleton(t *testing.T) {
	h := startController(t, testCluster)
	h.registerCPU(16)
	alice := h.as("alice", auth.RoleUser)
	var ids []uint64
	for range 3 {
		s := cpuTask("solo", "")
		s.Dependency = "singleton"
		ids = append(ids, h.submit(alice, s))
	}
	for step, running := range ids {
		h.pass()
		for _, id := range ids {
			if st := h.job(id).GetState(); (st == StateRunning) != (id == running) {
				t.Fatalf("step %d: job %d is %s; only %d should run", step, id, st, running)
			}
		}
		h.endJob(running, 0)
	}
	// after:<array>+time and aftercorr are understood (a corresponding
	// task waits for its own counterpart only).
	arr := h.submit(alice, cpuTask("a", "0-1"))
	corr := cpuTask("b", "0-1")
	corr.Dependency = "aftercorr:" + itoa(arr)
	h.submit(alice, corr)
	h.pass()
	rows := map[string]string{}
	for _, j := range h.liveJobs() {
		rows[j.GetArrayName()] = j.GetState() + "/" + j.GetReason()
	}
	for name, st := range rows {
		if strings.HasPrefix(name, itoa(arr)+"_") && !strings.HasPrefix(st, StateRunning) {
			t.Fatalf("array %d task %s is %s", arr, name, st)
		}
		if !strings.HasPrefix(name, itoa(arr)+"_") && st != StatePending+"/Dependency" {
			t.Fatalf("aftercorr task %s is %s before its counterpart ended", name, st)
		}
	}
	for _, j := range h.liveJobs() {
		if j.GetArrayJobId() == arr && j.GetArrayTaskId() == 1 {
			h.endJob(j.GetId(), 0)
		}
	}
	h.pass()
	rows = map[string]string{}
	for _, j := range h.liveJobs() {
		rows[j.GetArrayName()] = j.GetState()
	}
	corrID := itoa(arr + 1)
	if rows[corrID+"_1"] != StateRunning || rows[corrID+"_0"] != StatePending {
		t.Fatalf("after task 1 of %d ended: %v", arr, rows)
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }

// A dependency on a job the controller does not know is accepted and
// lifted, as on the Slurm 22.05 anchor: `sbatch --hold --parsable
// --dependency=afterok:999999 j.sh` printed a job id (rc 0), scontrol
// showed Dependency=afterok:999999(unfulfilled) JobState=PENDING
// Reason=JobHeldUser, and once released the job ran to COMPLETED; so did
// afterany:999999 and afterok:999999?afterok:1. A bad syntax is still
// refused once, without the phrase repeated ("Job dependency problem").
func TestDependencyOnUnknownJob(t *testing.T) {
	h := startController(t, testCluster)
	h.registerCPU(16)
	alice := h.as("alice", auth.RoleUser)
	for _, dep := range []string{"afterok:999999", "afterany:999999", "afternotok:999999", "afterok:999999?afterok:1", "afterok:999999:999998"} {
		s := cpuTask("d", "")
		s.Dependency = dep
		id := h.submit(alice, s)
		h.pass()
		if st := h.job(id).GetState(); st != StateRunning {
			t.Fatalf("--dependency=%s: job %d is %s after a pass, want %s (the unknown job lifts it)", dep, id, st, StateRunning)
		}
		h.endJob(id, 0)
	}
	bad := cpuTask("x", "")
	bad.Dependency = "afterwards:1"
	_, err := alice.Submit(context.Background(), bad)
	if status.Code(err) != codes.InvalidArgument || strings.Count(err.Error(), "dependency problem") != 1 {
		t.Fatalf("bad dependency syntax: %v; want one InvalidArgument naming the problem once", err)
	}
}
