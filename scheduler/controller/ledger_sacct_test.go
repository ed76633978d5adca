package controller

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// TestLedgerLinesAsSacctShowsThem: an array task's line names its array
// and index (sacct prints 12_1, not the task's own id), and a job
// cancelled while it ran ends CANCELLED by its canceller with 0:0 on its
// allocation line and CANCELLED 0:15 on its batch step's line, which keeps
// the job's name (sacct --name selects it with its job), as the anchor's
// sacct shows them (TestSacctCorpus).
func TestLedgerLinesAsSacctShowsThem(t *testing.T) {
	h, path := startWithLedger(t, billingCluster)
	ctx := context.Background()
	h.registerTyped("n1", "h100", 4)
	h.registerTyped("n2", "h100", 4)
	alice := h.as("alice", auth.RoleUser)
	arr := typedJob("arr", "nv", "h100", 1)
	arr.Array = "1-2"
	arrID := h.submit(alice, arr)
	h.pass()
	h.pass()
	long := h.submit(alice, typedJob("long", "nv", "h100", 1))
	h.pass()
	var tasks []uint64
	all, err := alice.ListJobs(ctx, &pb.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range all {
		if j.GetArrayJobId() == arrID && j.GetState() == StateRunning {
			tasks = append(tasks, j.GetId())
		}
	}
	if len(tasks) != 2 || h.job(long).GetState() != StateRunning {
		t.Fatalf("array tasks running %v, long job %s: want both tasks and the job running", tasks, h.job(long).GetState())
	}
	end := func(id uint64, signal int32) {
		t.Helper()
		node := h.job(id).GetAlloc()[0].GetNode()
		if err := h.agent(node).JobEnded(ctx, &pb.JobEndedRequest{Node: node, JobId: id, Signal: signal}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range tasks {
		end(id, 0)
	}
	longNode := h.job(long).GetAlloc()[0].GetNode()
	if _, err := alice.CancelJob(ctx, long); err != nil {
		t.Fatal(err)
	}
	end(long, 15)
	lines := readLedger(t, h, path)
	seen := map[uint32]bool{}
	for _, id := range tasks {
		l := lines[[2]uint64{id, 0}]
		if l.ArrayJobID != arrID || l.ArrayTaskID < 1 || l.ArrayTaskID > 2 || seen[l.ArrayTaskID] {
			t.Errorf("task %d's line is %s (array %d task %d), want %d_1 and %d_2", id, l.IDString(), l.ArrayJobID, l.ArrayTaskID, arrID, arrID)
		}
		seen[l.ArrayTaskID] = true
	}
	ro, err := ledger.OpenSQLite(ctx, path, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	steps, err := ro.Query(ctx, accounting.Filter{Names: []string{"long"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range steps {
		got = append(got, r.IDString()+" "+string(r.State)+" by "+r.CancelledBy+" "+strconv.Itoa(r.ExitCode)+":"+strconv.Itoa(r.ExitSignal)+" on "+r.NodeList)
	}
	want := []string{fmt.Sprintf("%d CANCELLED by alice 0:0 on %s", long, longNode), fmt.Sprintf("%d.batch CANCELLED by  0:15 on %s", long, longNode)}
	if !slices.Equal(got, want) {
		t.Errorf("--name long selects %q, want %q", got, want)
	}
	c := lines[[2]uint64{long, 0}]
	if c.State != accounting.StateCancelled || c.CancelledBy != "alice" || c.ExitCode != 0 || c.ExitSignal != 0 {
		t.Errorf("cancelled job's line: %s by %q, exit %d:%d; want CANCELLED by alice, 0:0", c.State, c.CancelledBy, c.ExitCode, c.ExitSignal)
	}
}
