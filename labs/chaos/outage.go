package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
	"github.com/parityhpc/parity/scheduler/store"
)

// outageLab keeps the controller's state directory (its state file, the
// ledger and the ledger's spool) on a small tmpfs the scenario can fill.
func outageLab() labOptions { return labOptions{name: "outage", tmpfsState: 64 << 20} }

// Sizes of the outages.
const (
	ledgerJobs  = 20
	stateJobs   = 20
	stateScript = 256 << 10 // a submission's script: pages the full disk must refuse
)

// runOutage makes the ledger unwritable while jobs end, then the state
// directory, and checks what comes back and what is refused.
func runOutage(ctx context.Context, l *lab, o *Options) []Row {
	return timedRows(ctx, l, o, ledgerOutage, stateOutage)
}

// ledgerOutage holds the ledger's write lock from another process (a real
// outage: the controller's writes wait, then spool) while jobs end,
// releases it and times how long the spooled records take to land.
func ledgerOutage(ctx context.Context, l *lab, o *Options) Row {
	row := Row{Scenario: "ledger outage (write lock held while jobs end)", Cases: ledgerJobs}
	lock, err := lockLedger(ctx, l.p.LedgerPath)
	if err != nil {
		row.fail("%v", err)
		return row
	}
	defer lock.release()
	names, err := runShortJobs(ctx, l, ledgerJobs)
	if err != nil {
		row.fail("%v", err)
		return row
	}
	// The controller's first write waits the ledger's busy timeout (5 s)
	// before it spools; the outage lasts past that.
	if err := clientenv.Sleep(ctx, 7*time.Second); err != nil {
		row.fail("%v", err)
		return row
	}
	before, err := inLedger(ctx, l.p.LedgerPath, names)
	if err != nil {
		row.fail("%v", err)
		return row
	}
	if err := lock.release(); err != nil {
		row.fail("release the ledger: %v", err)
		return row
	}
	released := time.Now()
	o.progressf("ledger: %d of %d jobs' records held back; the ledger is back", ledgerJobs-before, ledgerJobs)
	row.add("spooled", ledgerJobs-before)
	lag, err := waitLedger(ctx, l.p.LedgerPath, names, released, 90*time.Second)
	switch {
	case err != nil:
		row.add("in the ledger after", "—")
		row.warn("%v", err)
	default:
		row.add("in the ledger after", fmt.Sprintf("%s (target %s)", secs(lag), secs(o.LedgerLag)))
		if lag > o.LedgerLag {
			row.warn("the spooled records reached the ledger %s after the outage ended, past %s", secs(lag), secs(o.LedgerLag))
		}
	}
	if before > 0 {
		row.warn("%d of %d records were written during the outage: the lock did not hold them back", before, ledgerJobs)
	}
	return row
}

// ledgerLock is another process's write lock on the ledger (SQLite's
// BEGIN IMMEDIATE), as a backup or a stuck reader-writer holds it.
type ledgerLock struct {
	db   *sql.DB
	conn *sql.Conn
}

func lockLedger(ctx context.Context, path string) (*ledgerLock, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		return nil, fmt.Errorf("open the ledger: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err == nil {
		_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("lock the ledger: %w", err)
	}
	return &ledgerLock{db: db, conn: conn}, nil
}

// release rolls the lock back; once released, it does nothing.
func (k *ledgerLock) release() error {
	if k.conn == nil {
		return nil
	}
	_, err := k.conn.ExecContext(context.Background(), "ROLLBACK")
	err = errors.Join(err, k.conn.Close(), k.db.Close())
	k.conn = nil
	return err
}

// runShortJobs runs n `true` jobs on the cpu partition and waits until
// all have ended; it returns their names.
func runShortJobs(ctx context.Context, l *lab, n int) ([]string, error) {
	root, err := l.client(ctx, "root", auth.RoleAdmin)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var names []string
	var ids []uint64
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("chaos-ledger-%d", i)
		spec := heldSpec(name)
		spec.Hold = false
		id, err := root.Submit(ctx, spec)
		if err != nil {
			return nil, fmt.Errorf("submit: %w", err)
		}
		names, ids = append(names, name), append(ids, id)
	}
	for _, id := range ids {
		if _, err := l.waitJob(ctx, id, 2*time.Minute, func(j *pb.Job) bool { return finished(j.GetState()) }); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// inLedger counts the jobs named whose final line is in the ledger.
func inLedger(ctx context.Context, path string, names []string) (int, error) {
	db, err := store.OpenSQLite(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	recs, err := db.Query(ctx, accounting.Filter{Names: names, AllocationsOnly: true})
	if err != nil {
		return 0, err
	}
	done := map[uint64]bool{}
	for _, r := range recs {
		if r.State == accounting.StateCompleted {
			done[r.JobID] = true
		}
	}
	return len(done), nil
}

// waitLedger polls until every named job's line is in the ledger and
// returns how long after since that was.
func waitLedger(ctx context.Context, path string, names []string, since time.Time, limit time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		n, err := inLedger(ctx, path, names)
		if err == nil && n == len(names) {
			return time.Since(since), nil
		}
		if serr := clientenv.Sleep(ctx, 100*time.Millisecond); serr != nil {
			if err != nil {
				return 0, fmt.Errorf("the ledger %s after the outage ended: %w", secs(limit), err)
			}
			return 0, fmt.Errorf("%d of %d records in the ledger %s after the outage ended", n, len(names), secs(limit))
		}
	}
}

// stateOutage fills the state directory's file system, submits, frees
// it and submits again; then kills the controller and checks that every
// submission it acknowledged during the outage survived.
func stateOutage(ctx context.Context, l *lab, o *Options) Row {
	row := Row{Scenario: "state directory full", Cases: stateJobs}
	if l.mounted == "" {
		row.judge(Skip, "no tmpfs for the state directory")
		return row
	}
	filler := filepath.Join(l.mounted, "chaos-filler")
	if err := fill(filler); err != nil {
		row.fail("fill the state directory: %v", err)
		return row
	}
	cl, err := l.client(ctx, userAlice, auth.RoleUser)
	if err != nil {
		os.Remove(filler)
		row.fail("%v", err)
		return row
	}
	defer cl.Close()
	var acked []ack
	refused := 0
	for i := 0; i < stateJobs; i++ {
		name := fmt.Sprintf("chaos-full-%d", i)
		spec := heldSpec(name)
		spec.Script += strings.Repeat("#", stateScript) + "\n"
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		id, err := cl.Submit(cctx, spec)
		cancel()
		if err != nil {
			refused++
			if refused == 1 {
				row.Notes = append(row.Notes, "first refusal: "+err.Error())
			}
			continue
		}
		acked = append(acked, ack{id: id, name: name})
	}
	crashed := !l.ctl.alive()
	if err := os.Remove(filler); err != nil {
		row.fail("free the state directory: %v", err)
	}
	o.progressf("state: %d of %d submissions refused while the state directory was full", refused, stateJobs)
	row.add("refused", fmt.Sprintf("%d of %d", refused, stateJobs))
	row.add("acknowledged", len(acked))
	if crashed {
		row.fail("the controller died while its state directory was full (see %s)", l.dir)
		if _, err := l.startController(ctx); err != nil {
			row.fail("restart: %v", err)
			return row
		}
	}
	back, again, err := acceptedAgain(ctx, l)
	if err != nil {
		row.fail("after the state directory was freed: %v", err)
	} else {
		row.add("accepted again after", secs(again))
		acked = append(acked, back)
	}
	lost, err := survivesKill(ctx, l, acked)
	row.add("lost", len(lost))
	for _, n := range lost {
		row.fail("%s", n)
	}
	if err != nil {
		row.fail("%v", err)
	}
	if refused == 0 && !crashed {
		row.warn("the full state directory refused nothing: every submission was written (no lost job)")
	}
	return row
}

// fill writes zeros to path until its file system is full.
func fill(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, size := range []int{1 << 20, 4 << 10, 1} {
		buf := make([]byte, size)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					return err
				}
				break
			}
		}
	}
	return nil
}

// acceptedAgain submits until the controller takes a job again (30 s at
// most) and returns it and how long that took.
func acceptedAgain(ctx context.Context, l *lab) (ack, time.Duration, error) {
	cl, err := l.client(ctx, userAlice, auth.RoleUser)
	if err != nil {
		return ack{}, 0, err
	}
	defer cl.Close()
	t0 := time.Now()
	for {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		id, err := cl.Submit(cctx, heldSpec("chaos-full-after"))
		cancel()
		if err == nil {
			return ack{id: id, name: "chaos-full-after"}, time.Since(t0), nil
		}
		if time.Since(t0) > 30*time.Second {
			return ack{}, 0, fmt.Errorf("still refused after 30 s: %w", err)
		}
		if serr := clientenv.Sleep(ctx, 200*time.Millisecond); serr != nil {
			return ack{}, 0, serr
		}
	}
}

// survivesKill kills the controller with SIGKILL, restarts it, and
// returns the acknowledged jobs it no longer knows.
func survivesKill(ctx context.Context, l *lab, acked []ack) ([]string, error) {
	if err := l.ctl.kill(ctx, syscall.SIGKILL); err != nil {
		return nil, err
	}
	if _, err := l.startController(ctx); err != nil {
		return nil, err
	}
	lost, reused, err := checkAcked(ctx, l, acked, map[uint64]string{})
	return append(lost, reused...), err
}
