package format

import (
	"os"
	"strings"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// recordedLine is the line of a recorded scontrol show job that starts
// with key= (after its indent).
func recordedLine(t *testing.T, path, key string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, key+"=") {
			return l
		}
	}
	t.Fatalf("%s records no %s line", path, key)
	return ""
}

// scontrol show job -d prints DerivedExitCode after the ExitCode line as
// Slurm 22.05 did on the anchor (steps 6:0 and 0:10, script 2:0); without
// -d it is not shown.
func TestShowJobDerivedExitCodeAsSlurm2205(t *testing.T) {
	const recorded = "testdata/slurm2205_showjob_d.txt"
	start := ts(0)
	j := &pb.Job{Id: 21, User: "root", State: "FAILED", Reason: "NonZeroExitCode", Partition: "gpu", ExitCode: 2,
		SubmitTime: start, StartTime: start, EndTime: ts(4 * time.Second), Spec: &pb.JobSpec{Name: "jd.sh", Requeue: true},
		Steps: []*pb.JobStep{
			{Id: 0, Name: "bash", State: "FAILED", ExitCode: 6, StartTime: start, EndTime: start},
			{Id: 1, Name: "bash", State: "CANCELLED", Signal: 10, StartTime: start, EndTime: start},
		}}
	for _, details := range []bool{true, false} {
		var b strings.Builder
		if err := ShowJobs(&b, []*pb.Job{j}, ShowOptions{Env: env, Details: details}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		has := strings.Contains(b.String(), "DerivedExitCode=")
		if !details {
			if has {
				t.Errorf("without -d DerivedExitCode is shown:\n%s", b.String())
			}
			continue
		}
		if len(lines) < 6 || strings.TrimSpace(lines[5]) != recordedLine(t, recorded, "DerivedExitCode") ||
			!strings.HasPrefix(strings.TrimSpace(lines[4]), "Requeue=") {
			t.Errorf("show job -d:\n%s\nwant line 6 %q after the Requeue line, as %s", b.String(), recordedLine(t, recorded, "DerivedExitCode"), recorded)
		}
	}
	// A requeued job's earlier run's steps do not count.
	j.StartTime = ts(time.Minute)
	var b strings.Builder
	if err := ShowJobs(&b, []*pb.Job{j}, ShowOptions{Env: env, Details: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "DerivedExitCode=0:0") {
		t.Errorf("steps of an earlier run counted:\n%s", b.String())
	}
}
