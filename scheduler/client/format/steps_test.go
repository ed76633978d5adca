package format

import (
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

func TestShowJobListsSteps(t *testing.T) {
	start := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	j := &pb.Job{Id: 5, User: "alice", State: "RUNNING", Spec: &pb.JobSpec{Name: "i", Interactive: true},
		Steps: []*pb.JobStep{
			{Id: 0, Name: "hostname", State: "COMPLETED", Nodes: []string{"n1", "n2"}, Ntasks: 2,
				StartTime: api.Timestamp(start), EndTime: api.Timestamp(start.Add(time.Second))},
			{Id: 1, Name: "sleep", State: "CANCELLED", Nodes: []string{"n1"}, Ntasks: 1, Signal: 15, Reason: "srun went away",
				StartTime: api.Timestamp(start)},
		}}
	var b strings.Builder
	if err := ShowJobs(&b, []*pb.Job{j}, ShowOptions{Env: Env{Now: start.Add(time.Minute), Loc: time.UTC}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"BatchFlag=0",
		"Step=5.0 Name=hostname State=COMPLETED ExitCode=0:0 NodeList=n[1-2] NumTasks=2 StartTime=2025-06-02T09:00:00 EndTime=2025-06-02T09:00:01",
		"Step=5.1 Name=sleep State=CANCELLED ExitCode=0:15 NodeList=n1 NumTasks=1 StartTime=2025-06-02T09:00:00 EndTime=Unknown Reason=srun_went_away",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show job lacks %q:\n%s", want, out)
		}
	}
}
