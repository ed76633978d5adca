package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
)

// flaky is a real ledger behind a switch: while down, every write fails
// as a dead database server would.
type flaky struct {
	Ledger
	down atomic.Bool
}

var errDown = errors.New("test: database server unreachable")

func (f *flaky) Record(ctx context.Context, rec JobRecord) error {
	if f.down.Load() {
		return errDown
	}
	return f.Ledger.Record(ctx, rec)
}

// lifecycle returns, for n jobs, a start record then an end record each,
// interleaved the way a controller emits them (start 1, start 2, end 1, …).
func lifecycle(n int) []JobRecord {
	var out, starts []JobRecord
	end := func(r JobRecord) JobRecord {
		r.End, r.State = r.Start.Add(30*time.Second), accounting.StateCompleted
		return r
	}
	for i := range n {
		start := job(uint64(100+i), "alice", "physics", day0.Add(time.Duration(i)*time.Minute), time.Time{}, "billing=2,cpu=2")
		starts = append(starts, start)
		out = append(out, start)
		if i > 0 {
			out = append(out, end(starts[i-1]))
		}
	}
	return append(out, end(starts[n-1]))
}

func sameOrder(t *testing.T, got, want []JobRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("ledger received %d writes, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].JobID != want[i].JobID || got[i].State != want[i].State {
			t.Fatalf("write %d = job %d %s, want job %d %s", i, got[i].JobID, got[i].State, want[i].JobID, want[i].State)
		}
	}
}

// Records made during an outage are spooled; after a process restart
// (both ledger and spool reopened) they all land once, in order, and the
// final line of every job is its end record.
func TestSpooledOutageAndRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath, spoolPath := filepath.Join(dir, "ledger.db"), filepath.Join(dir, "spool.db")
	recs := lifecycle(20)

	db, err := OpenSQLite(ctx, dbPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &flaky{Ledger: db}
	clock := &fakeClock{now: day0}
	sp, err := NewSpooled(f, spoolPath, SpoolOptions{Now: clock.Now, RetryInterval: time.Minute, BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	// The first three go straight through; then the database dies.
	for _, r := range recs[:3] {
		if err := sp.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	f.down.Store(true)
	for _, r := range recs[3:] {
		if err := sp.Record(ctx, r); err != nil {
			t.Fatalf("Record during outage: %v (must be spooled, not fail)", err)
		}
	}
	if sp.Pending() != len(recs)-3 {
		t.Fatalf("pending = %d, want %d", sp.Pending(), len(recs)-3)
	}
	if _, err := sp.Drain(ctx); !errors.Is(err, errDown) {
		t.Fatalf("Drain while down err = %v", err)
	}
	// The controller is restarted while the database is still down.
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}

	db2, err := OpenSQLite(ctx, dbPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recording{Ledger: db2}
	sp2, err := NewSpooled(rec, spoolPath, SpoolOptions{Now: clock.Now, RetryInterval: time.Minute, BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer sp2.Close()
	if sp2.Pending() != len(recs)-3 {
		t.Fatalf("after restart pending = %d, want %d", sp2.Pending(), len(recs)-3)
	}
	n, err := sp2.Drain(ctx)
	if err != nil || n != len(recs)-3 {
		t.Fatalf("Drain = %d, %v", n, err)
	}
	sameOrder(t, rec.written(), recs[3:])
	got, err := db2.Query(ctx, Filter{Duplicates: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 20 {
		t.Fatalf("ledger holds %d lines, want one per job (20)", len(got))
	}
	for _, g := range got {
		if g.State != accounting.StateCompleted || g.End.IsZero() {
			t.Fatalf("job %d ended as %s: an end record was overwritten by its start", g.JobID, g.State)
		}
	}
	if sp2.Pending() != 0 {
		t.Fatalf("pending after drain = %d", sp2.Pending())
	}
}

// A real outage: another process holds the SQLite write lock. Records
// queue (Record returns at once after the first lock wait), new records
// stay behind spooled ones, and everything lands when the lock goes.
func TestSpooledLockedDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "ledger.db")
	db, err := OpenSQLite(ctx, dbPath, Options{BusyTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recording{Ledger: db}
	clock := &fakeClock{now: day0}
	sp, err := NewSpooled(rec, filepath.Join(dir, "spool.db"), SpoolOptions{Now: clock.Now, RetryInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()

	locker, err := sql.Open("sqlite", "file:"+dbPath+"?_busy_timeout=1000")
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

	recs := lifecycle(5)
	for _, r := range recs {
		if err := sp.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if sp.Pending() != len(recs) || len(rec.written()) != 0 {
		t.Fatalf("pending %d, written %d; want all spooled", sp.Pending(), len(rec.written()))
	}
	// Readers still work in WAL mode; spooled records are not there yet.
	if got, err := sp.Query(ctx, Filter{}); err != nil || len(got) != 0 {
		t.Fatalf("Query during the lock = %d lines, %v", len(got), err)
	}

	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	// Before RetryInterval passes, Record keeps queueing behind the spool.
	extra := job(999, "bob", "chem", day0, day0.Add(time.Hour), "billing=1,cpu=1")
	if err := sp.Record(ctx, extra); err != nil || sp.Pending() != len(recs)+1 {
		t.Fatalf("Record before retry: %v, pending %d", err, sp.Pending())
	}
	// After it, the next Record drains the backlog first, then writes.
	clock.Advance(2 * time.Minute)
	last := job(1000, "bob", "chem", day0, day0.Add(time.Hour), "billing=1,cpu=1")
	if err := sp.Record(ctx, last); err != nil {
		t.Fatal(err)
	}
	if sp.Pending() != 0 {
		t.Fatalf("pending after recovery = %d", sp.Pending())
	}
	sameOrder(t, rec.written(), append(append(append([]JobRecord{}, recs...), extra), last))
	got, err := sp.Query(ctx, Filter{})
	if err != nil || len(got) != 7 {
		t.Fatalf("ledger after recovery: %d lines, %v; want 7", len(got), err)
	}
}

// A record written just before a crash and replayed after it (the spool
// was not yet trimmed) still leaves exactly one line.
func TestSpoolReplayIsIdempotent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, Options{})
	recs := lifecycle(4)
	if err := db.RecordMany(ctx, recs); err != nil {
		t.Fatal(err)
	}
	spool, err := OpenSpool(filepath.Join(dir, "spool.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := spool.Append(recs...); err != nil {
		t.Fatal(err)
	}
	spool.Close()
	sp, err := NewSpooled(db, filepath.Join(dir, "spool.db"), SpoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := sp.Drain(ctx); err != nil || n != len(recs) {
		t.Fatalf("Drain = %d, %v", n, err)
	}
	got, _ := db.Query(ctx, Filter{Duplicates: true})
	if len(got) != 4 {
		t.Fatalf("replay left %d lines, want 4", len(got))
	}
	sp.spool.Close()
}

func TestSpooledRejectsInvalidWithoutSpooling(t *testing.T) {
	ctx := context.Background()
	f := &flaky{Ledger: openTest(t, Options{})}
	f.down.Store(true)
	sp, err := NewSpooled(f, filepath.Join(t.TempDir(), "spool.db"), SpoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.spool.Close()
	bad := job(1, "alice", "x", day0, day0.Add(time.Hour), "cpu=1")
	bad.State = "DONE"
	if err := sp.Record(ctx, bad); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("invalid record err = %v", err)
	}
	if sp.Pending() != 0 {
		t.Fatalf("an invalid record was spooled")
	}
}

// Run drains on ticks; the second tick is accepted only after the first
// drain finished, which is the synchronisation (no sleeps).
func TestSpooledRunDrainsOnTick(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &flaky{Ledger: openTest(t, Options{})}
	f.down.Store(true)
	sp, err := NewSpooled(f, filepath.Join(t.TempDir(), "spool.db"), SpoolOptions{RetryInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.spool.Close()
	for i := range 3 {
		if err := sp.Record(ctx, job(uint64(i+1), "a", "x", day0, day0.Add(time.Hour), "cpu=1")); err != nil {
			t.Fatal(err)
		}
	}
	f.down.Store(false)
	ticks := make(chan time.Time)
	done := make(chan struct{})
	go func() { sp.Run(ctx, ticks); close(done) }()
	ticks <- day0
	ticks <- day0
	if sp.Pending() != 0 {
		t.Fatalf("pending after a tick = %d", sp.Pending())
	}
	cancel()
	<-done
	got, _ := f.Query(context.Background(), Filter{})
	if len(got) != 3 {
		t.Fatalf("ledger has %d lines, want 3", len(got))
	}
}

func TestSpoolSecondOpenerFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool.db")
	a, err := OpenSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := OpenSpool(path); err == nil {
		t.Fatal("a second process could open the same spool")
	}
	if err := a.Append(job(1, "a", "x", day0, day0, "cpu=1")); err != nil {
		t.Fatal(err)
	}
	got, err := a.Peek(10)
	if err != nil || len(got) != 1 || got[0].rec.JobID != 1 {
		t.Fatalf("Peek = %+v, %v", got, err)
	}
	if err := a.Reject(got[0].seq); err != nil {
		t.Fatal(err)
	}
	if p, r, _ := a.Len(); p != 0 || r != 1 {
		t.Fatalf("after Reject pending %d rejected %d", p, r)
	}
}

// Many writers record start-then-end of their own jobs through one
// Spooled while the database goes down and comes back: every job lands
// once, as its end record (each writer's order kept), race-free.
func TestSpooledConcurrentWritersThroughOutage(t *testing.T) {
	ctx := context.Background()
	f := &flaky{Ledger: openTest(t, Options{})}
	sp, err := NewSpooled(f, filepath.Join(t.TempDir(), "spool.db"), SpoolOptions{RetryInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.spool.Close()
	const writers, jobsEach = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for j := range jobsEach {
				if w == 0 && j == jobsEach/3 {
					f.down.Store(true)
				}
				if w == 0 && j == 2*jobsEach/3 {
					f.down.Store(false)
				}
				id := uint64(1 + w*jobsEach + j)
				start := job(id, fmt.Sprintf("u%d", w), "x", day0.Add(time.Duration(j)*time.Minute), time.Time{}, "cpu=1")
				end := start
				end.End, end.State = start.Start.Add(time.Second), accounting.StateCompleted
				for _, r := range []JobRecord{start, end} {
					if err := sp.Record(ctx, r); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	f.down.Store(false)
	if _, err := sp.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := f.Query(ctx, Filter{Duplicates: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != writers*jobsEach {
		t.Fatalf("ledger has %d lines, want %d", len(got), writers*jobsEach)
	}
	for _, g := range got {
		if g.State != accounting.StateCompleted {
			t.Fatalf("job %d is %s: its start overwrote its end", g.JobID, g.State)
		}
	}
}
