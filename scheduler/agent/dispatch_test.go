package agent

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// TestJobLanesOrderPerJobAndOverlapAcrossJobs: a job's orders run in
// arrival order, one at a time, while another job's run meanwhile.
func TestJobLanesOrderPerJobAndOverlapAcrossJobs(t *testing.T) {
	var l jobLanes
	var mu sync.Mutex
	var ran []string
	block := make(chan struct{})
	job2Ran := make(chan struct{})
	handle := func(_ context.Context, o *pb.Order) {
		name := o.GetKind()
		if name == "1-launch" {
			<-block // the first job's launch is slow
		}
		mu.Lock()
		ran = append(ran, name)
		mu.Unlock()
		if name == "2-launch" {
			close(job2Ran)
		}
	}
	ctx := context.Background()
	l.dispatch(ctx, &pb.Order{JobId: 1, Kind: "1-launch"}, handle)
	l.dispatch(ctx, &pb.Order{JobId: 1, Kind: "1-kill"}, handle)
	l.dispatch(ctx, &pb.Order{JobId: 2, Kind: "2-launch"}, handle)
	select {
	case <-job2Ran:
	case <-time.After(10 * time.Second):
		t.Fatal("job 2's order waited behind job 1's")
	}
	mu.Lock()
	if slices.Contains(ran, "1-kill") {
		t.Error("job 1's kill ran before its launch finished")
	}
	mu.Unlock()
	close(block)
	l.wait()
	if want := []string{"2-launch", "1-launch", "1-kill"}; !slices.Equal(ran, want) {
		t.Errorf("ran %v; want %v", ran, want)
	}
	if len(l.queued) != 0 {
		t.Errorf("lanes left open: %v", l.queued)
	}
}
