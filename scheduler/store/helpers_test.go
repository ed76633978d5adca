package store

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
)

func openTest(t testing.TB, opt Options) *SQLite {
	t.Helper()
	s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func tres(t testing.TB, s string) accounting.TRES {
	t.Helper()
	tr, err := accounting.ParseTRES(s)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

var day0 = time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC) // a Monday

// job builds a finished allocation line.
func job(id uint64, user, account string, start, end time.Time, alloc string) JobRecord {
	tr, err := accounting.ParseTRES(alloc)
	if err != nil {
		panic(err) // test fixtures are constants
	}
	state := accounting.StateCompleted
	if end.IsZero() {
		state = accounting.StateRunning
	}
	return JobRecord{JobID: id, User: user, Account: account, Partition: "gpu", Name: "job",
		Submit: start.Add(-time.Minute), Eligible: start.Add(-time.Minute), Start: start, End: end,
		State: state, NNodes: 1, NodeList: "n01", AllocTRES: tr, ReqTRES: tr}
}

// recording wraps a Ledger and keeps the order of successful writes: a
// decorator over the real store, not a fake.
type recording struct {
	Ledger
	mu     sync.Mutex
	writes []JobRecord
}

func (r *recording) Record(ctx context.Context, rec JobRecord) error {
	if err := r.Ledger.Record(ctx, rec); err != nil {
		return err
	}
	r.mu.Lock()
	r.writes = append(r.writes, rec)
	r.mu.Unlock()
	return nil
}

func (r *recording) written() []JobRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]JobRecord(nil), r.writes...)
}

// fakeClock is an injected clock the test advances.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
