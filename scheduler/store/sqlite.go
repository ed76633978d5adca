package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/parityhpc/parity/scheduler/accounting"
)

// Options tune OpenSQLite; the zero value is the controller's default.
type Options struct {
	// BusyTimeout is how long a write waits for a lock another process
	// holds before failing (and, under Spooled, being spooled). Default 5s.
	BusyTimeout time.Duration
	// Synchronous is SQLite's synchronous setting under WAL: NORMAL (the
	// default) survives a process crash, FULL also a power cut, at an fsync
	// per transaction.
	Synchronous string
	// ReadOnly opens an existing ledger for queries only (the command line):
	// nothing is created or migrated.
	ReadOnly bool
	Logger   *slog.Logger
}

// SQLite is the embedded Ledger: one writer connection (SQLite has one
// writer at a time) and a pool of readers, in WAL mode so queries do not
// wait for writes.
type SQLite struct {
	path   string
	w, r   *sql.DB
	upsert *sql.Stmt // prepared once on the writer: parsing it costs more than running it
	log    *slog.Logger
	closed atomic.Bool
	group  groupCommit
}

var (
	_ Ledger        = (*SQLite)(nil)
	_ BatchRecorder = (*SQLite)(nil)
)

// OpenSQLite opens (creating if needed) the ledger at path and migrates
// it to the current schema. With ReadOnly the file must exist and be
// current.
func OpenSQLite(ctx context.Context, path string, opt Options) (*SQLite, error) {
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = 5 * time.Second
	}
	syncMode := strings.ToUpper(opt.Synchronous)
	switch syncMode {
	case "":
		syncMode = "NORMAL"
	case "NORMAL", "FULL", "EXTRA":
	default:
		return nil, fmt.Errorf("store: Synchronous=%q must be NORMAL, FULL or EXTRA", opt.Synchronous)
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	s := &SQLite{path: path, log: opt.Logger}
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(opt.BusyTimeout.Milliseconds()))
	if opt.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrNotFound, path, err)
		}
		q.Set("mode", "ro")
		r, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
		if err != nil {
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
		s.r = r
		v, err := schemaVersion(ctx, r)
		if err == nil && v != latestVersion() {
			err = fmt.Errorf("%w: %s is at version %d, want %d", ErrNeedsMigrate, path, v, latestVersion())
			if v > latestVersion() {
				err = fmt.Errorf("%w: %s is at version %d, want %d", ErrSchemaTooNew, path, v, latestVersion())
			}
		}
		if err != nil {
			r.Close()
			return nil, err
		}
		return s, nil
	}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", syncMode)
	q.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	before, err := schemaVersion(ctx, w)
	if err == nil {
		err = migrate(ctx, w, migrations)
	}
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	if before != latestVersion() {
		s.log.Info("accounting ledger schema migrated", "path", path, "from", before, "to", latestVersion())
	}
	q.Del("_journal_mode")
	q.Del("_txlock")
	q.Set("_query_only", "1")
	r, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	upsert, err := w.PrepareContext(ctx, upsertSQL())
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("store: prepare upsert: %w", err)
	}
	s.w, s.r, s.upsert = w, r, upsert
	return s, nil
}

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// Close closes both connection pools.
func (s *SQLite) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	var errs []error
	if s.upsert != nil {
		errs = append(errs, s.upsert.Close())
	}
	for _, db := range []*sql.DB{s.w, s.r} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}

// columns is the jobs table in insert/select order.
var columns = []string{
	"job_id", "run", "step", "array_job_id", "array_task_id", "name", "user", "account", "partition", "qos",
	"submit", "eligible", "start", "end", "begin_ts", "end_key", "state", "exit_code", "exit_signal",
	"nodelist", "nnodes", "timelimit", "req_tres", "alloc_tres", "cancelled_by", "gpu_uuids",
	"cpu_time_ms", "max_rss_mib", "gpu_util_mean", "gpu_util_max", "gpu_mem_max_mib", "start_decision", "end_decision",
	"derived_exit_code", "derived_signal",
}

// upsertSQL replaces every column but the key on conflict.
func upsertSQL() string {
	set := make([]string, 0, len(columns))
	for _, c := range columns[3:] {
		set = append(set, c+"=excluded."+c)
	}
	return "INSERT INTO jobs (" + strings.Join(columns, ",") + ") VALUES (?" + strings.Repeat(",?", len(columns)-1) +
		") ON CONFLICT (job_id, run, step) DO UPDATE SET " + strings.Join(set, ",")
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func timeOf(sec int64) time.Time {
	if sec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

// endKey is end, or the largest integer while the line has not ended.
func endKey(r *JobRecord) int64 {
	if r.End.IsZero() {
		return math.MaxInt64
	}
	return r.End.Unix()
}

// args flattens r in columns order.
func args(r *JobRecord) []any {
	return []any{
		int64(r.JobID), r.Run, r.Step, int64(r.ArrayJobID), int64(r.ArrayTaskID), r.Name, r.User, r.Account, r.Partition, r.QOS,
		unixOrZero(r.Submit), unixOrZero(r.Eligible), unixOrZero(r.Start), unixOrZero(r.End),
		unixOrZero(r.Begin()), endKey(r), string(r.State), r.ExitCode, r.ExitSignal,
		r.NodeList, r.NNodes, int64(r.Timelimit / time.Second), r.ReqTRES.String(), r.AllocTRES.String(),
		r.CancelledBy, strings.Join(r.GPUUUIDs, ","), r.Usage.CPUTime.Milliseconds(), r.Usage.MaxRSSMiB,
		r.Usage.GPUUtilMean, r.Usage.GPUUtilMax, r.Usage.GPUMemMaxMiB, r.StartDecision, r.EndDecision,
		r.DerivedExitCode, r.DerivedSignal,
	}
}

// prepare normalises and validates a record before it is written.
func prepare(rec JobRecord) (JobRecord, error) {
	rec.Normalize()
	if err := rec.Validate(); err != nil {
		return rec, err
	}
	return rec, nil
}

// Record upserts one line (see Ledger).
func (s *SQLite) Record(ctx context.Context, rec JobRecord) error {
	return s.RecordMany(ctx, []JobRecord{rec})
}

// RecordMany upserts recs in one transaction, in order. Concurrent callers
// share transactions (group commit): one commit costs far more than one
// row, so a controller recording many job events at once pays for a few
// commits, not one each. A call returns once its records are committed, or
// with the error that failed their transaction.
func (s *SQLite) RecordMany(ctx context.Context, recs []JobRecord) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if s.w == nil {
		return fmt.Errorf("store: %s is open read-only", s.path)
	}
	prepared := make([]JobRecord, len(recs))
	for i, r := range recs {
		p, err := prepare(r)
		if err != nil {
			return err
		}
		prepared[i] = p
	}
	return s.group.submit(ctx, prepared, s.commit)
}

// commit writes batches in one transaction, in order.
func (s *SQLite) commit(ctx context.Context, batches [][]JobRecord) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	stmt := tx.StmtContext(ctx, s.upsert)
	defer stmt.Close()
	for _, recs := range batches {
		for i := range recs {
			if _, err := stmt.ExecContext(ctx, args(&recs[i])...); err != nil {
				return fmt.Errorf("store: record job %d run %d step %q: %w", recs[i].JobID, recs[i].Run, recs[i].Step, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// groupCommit lets concurrent writers share a transaction: the first
// writer to arrive commits everything queued, repeatedly, until the queue
// is empty; the others wait for the outcome of the transaction that
// carried their records.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*commitReq
	leading bool
}

type commitReq struct {
	recs []JobRecord
	done chan error
}

// submit queues recs and returns the result of the commit that wrote them.
func (g *groupCommit) submit(ctx context.Context, recs []JobRecord, commit func(context.Context, [][]JobRecord) error) error {
	req := &commitReq{recs: recs, done: make(chan error, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, req)
	if g.leading {
		g.mu.Unlock()
		return <-req.done
	}
	g.leading = true
	// A caller giving up must not fail the others' records.
	ctx = context.WithoutCancel(ctx)
	for len(g.queue) > 0 {
		// Let writers that are ready join this transaction first.
		g.mu.Unlock()
		runtime.Gosched()
		g.mu.Lock()
		batch := g.queue
		g.queue = nil
		g.mu.Unlock()
		recs := make([][]JobRecord, len(batch))
		for i, r := range batch {
			recs[i] = r.recs
		}
		err := commit(ctx, recs)
		for _, r := range batch {
			r.done <- err
		}
		g.mu.Lock()
	}
	g.leading = false
	g.mu.Unlock()
	return <-req.done
}

// scanRecord reads one row selected with columns.
func scanRecord(rows *sql.Rows) (JobRecord, error) {
	var r JobRecord
	var jobID, arrayJob, arrayTask, submit, eligible, start, end, beginTS, endK, limit, cpuMS int64
	var state, req, alloc, uuids string
	err := rows.Scan(&jobID, &r.Run, &r.Step, &arrayJob, &arrayTask, &r.Name, &r.User, &r.Account, &r.Partition, &r.QOS,
		&submit, &eligible, &start, &end, &beginTS, &endK, &state, &r.ExitCode, &r.ExitSignal,
		&r.NodeList, &r.NNodes, &limit, &req, &alloc, &r.CancelledBy, &uuids,
		&cpuMS, &r.Usage.MaxRSSMiB, &r.Usage.GPUUtilMean, &r.Usage.GPUUtilMax, &r.Usage.GPUMemMaxMiB, &r.StartDecision, &r.EndDecision,
		&r.DerivedExitCode, &r.DerivedSignal)
	if err != nil {
		return r, fmt.Errorf("store: read job line: %w", err)
	}
	r.JobID, r.ArrayJobID, r.ArrayTaskID = uint64(jobID), uint64(arrayJob), uint32(arrayTask)
	r.Submit, r.Eligible, r.Start, r.End = timeOf(submit), timeOf(eligible), timeOf(start), timeOf(end)
	r.State = accounting.JobState(state)
	r.Timelimit = time.Duration(limit) * time.Second
	r.Usage.CPUTime = time.Duration(cpuMS) * time.Millisecond
	if uuids != "" {
		r.GPUUUIDs = strings.Split(uuids, ",")
	}
	if r.ReqTRES, err = accounting.ParseTRES(req); err != nil {
		return r, fmt.Errorf("store: job %d: stored ReqTRES: %w", r.JobID, err)
	}
	if r.AllocTRES, err = accounting.ParseTRES(alloc); err != nil {
		return r, fmt.Errorf("store: job %d: stored AllocTRES: %w", r.JobID, err)
	}
	return r, nil
}
