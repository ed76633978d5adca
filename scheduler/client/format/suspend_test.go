package format

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// Time suspended is not run time: a job that ran 10 min, was suspended
// 30 min, resumed and ran 5 more, then was suspended again for 15 min,
// has run 15 min.
func TestRunTimeLeavesOutSuspensions(t *testing.T) {
	start := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	now := start.Add(60 * time.Minute)
	suspended := &pb.Job{Id: 7, State: "SUSPENDED", StartTime: timestamppb.New(start), TimeLimitSeconds: 3600,
		SuspendTime: timestamppb.New(start.Add(45 * time.Minute)), SuspendedSeconds: 30 * 60, Spec: &pb.JobSpec{}}
	if got := RunSeconds(suspended, Env{Now: now}); got != 15*60 {
		t.Errorf("RunSeconds(suspended) = %d, want %d", got, 15*60)
	}
	running := &pb.Job{Id: 8, State: "RUNNING", StartTime: timestamppb.New(start), TimeLimitSeconds: 3600, SuspendedSeconds: 30 * 60, Spec: &pb.JobSpec{}}
	if got := RunSeconds(running, Env{Now: now}); got != 30*60 {
		t.Errorf("RunSeconds(resumed) = %d, want %d", got, 30*60)
	}
	var b strings.Builder
	if err := ShowJobs(&b, []*pb.Job{suspended, running}, ShowOptions{Env: Env{Now: now}}); err != nil {
		t.Fatal(err)
	}
	recs := pairs(t, b.String(), false)
	if r := recs[0]; r["JobState"] != "SUSPENDED" || r["SuspendTime"] != "2025-06-02T09:45:00" || r["SecsPreSuspend"] != "900" || r["RunTime"] != "00:15:00" {
		t.Errorf("suspended job: %v", r)
	}
	// The limit's end moves by the time suspended: 09:00 + 1h + 30 min.
	if r := recs[1]; r["SuspendTime"] != "None" || r["SecsPreSuspend"] != "0" || r["EndTime"] != "2025-06-02T10:30:00" {
		t.Errorf("resumed job: %v", r)
	}
}
