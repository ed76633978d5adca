package controller

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// watchedSpool is the spooling ledger the controller writes to, telling
// the test what each write carried and when a drain returned.
type watchedSpool struct {
	*ledger.Spooled
	wrote   chan []ledger.JobRecord
	drained chan int
}

func (w *watchedSpool) RecordMany(ctx context.Context, recs []ledger.JobRecord) error {
	err := w.Spooled.RecordMany(ctx, recs)
	w.wrote <- slices.Clone(recs) // the caller reuses its batch
	return err
}

func (w *watchedSpool) Record(ctx context.Context, rec ledger.JobRecord) error {
	return w.RecordMany(ctx, []ledger.JobRecord{rec})
}

func (w *watchedSpool) Drain(ctx context.Context) (int, error) {
	n, err := w.Spooled.Drain(ctx)
	if err == nil {
		w.drained <- n
	}
	return n, err
}

// Records spooled while the ledger was down reach it within one
// maintenance interval (5 s) of the outage's end, with no job ending to
// push them: before, they waited for the next record.
func TestLedgerSpoolDrainsAfterAnOutageWithoutAnotherRecord(t *testing.T) {
	ctx := context.Background()
	h := startController(t, testCluster)
	h.c.Close()
	path := filepath.Join(h.dir, "accounting.db")
	db, err := ledger.OpenSQLite(ctx, path, ledger.Options{BusyTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ledger.NewSpooled(db, path+".spool", ledger.SpoolOptions{Now: h.clock.Now, RetryInterval: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w := &watchedSpool{Spooled: sp, wrote: make(chan []ledger.JobRecord, 1024), drained: make(chan int, 16)}

	// The outage: another connection holds the database's write lock.
	locker, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	conn, err := locker.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	h.startWith(func(o *Options) { o.Ledger = w })
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	var ids []uint64
	for range 4 {
		ids = append(ids, h.submit(alice, gpuJob("spooled", 1)))
	}
	h.pass()
	for _, id := range ids {
		if err := h.agent("n1").JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: id, ExitCode: 0}); err != nil {
			t.Fatal(err)
		}
	}
	// Every job's end went to the spool.
	ended := map[uint64]bool{}
	for len(ended) < len(ids) {
		select {
		case recs := <-w.wrote:
			for _, r := range recs {
				if r.State == accounting.StateCompleted {
					ended[r.JobID] = true
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ends written: %v of %v", ended, ids)
		}
	}
	if n := sp.Pending(); n == 0 {
		t.Fatal("nothing spooled during the outage")
	}

	// The outage ends; no job ends after it. One maintenance pass later
	// (the loop runs one every 5 s at most) the spool is empty.
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(5 * time.Second)
	h.maintain()
	select {
	case <-w.drained:
	case <-time.After(10 * time.Second):
		t.Fatalf("no drain within 10 s of a maintenance pass after the outage; %d records still spooled", sp.Pending())
	}
	if n := sp.Pending(); n != 0 {
		t.Fatalf("%d records still spooled after the drain", n)
	}
	// Read the database itself: a query through the spool would drain it.
	recs, err := db.Query(ctx, accounting.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64]accounting.JobState{}
	for _, r := range recs {
		got[r.JobID] = r.State
	}
	for _, id := range ids {
		if got[id] != accounting.StateCompleted {
			t.Errorf("job %d in the ledger: %q, want COMPLETED (ledger: %v)", id, got[id], got)
		}
	}
}
