package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// SpoolOptions tune NewSpooled; the zero value is usable.
type SpoolOptions struct {
	// Now is the clock (default time.Now); tests inject one.
	Now func() time.Time
	// RetryInterval is how long after a failed write Record spools without
	// trying the ledger, so an outage (a lock wait, a dead server) does not
	// slow every caller. Drain always tries. Default 5s.
	RetryInterval time.Duration
	// BatchSize is how many spooled records one drain transaction writes.
	// Default 256.
	BatchSize int
	Logger    *slog.Logger
}

// Spooled is a Ledger that never loses a record the ledger behind it
// cannot take: such records go to a durable spool and are written, in the
// order they were recorded, when the ledger works again (on the next
// Record after RetryInterval, on Drain, or from Run). While anything is
// spooled new records queue behind it, so a job's end never lands before
// its start. Replaying is safe because Record is an upsert: a record
// written just before a crash and replayed after it still leaves one line.
type Spooled struct {
	inner Ledger
	spool *Spool
	opt   SpoolOptions

	mu       sync.Mutex // guards the spool and the fields below; held while draining
	pending  int
	retryAt  time.Time
	lastFail error
}

var (
	_ Ledger        = (*Spooled)(nil)
	_ BatchRecorder = (*Spooled)(nil)
)

// NewSpooled wraps inner with the spool at spoolPath (created if absent;
// records left there by an earlier process are replayed first). Spooled
// owns inner: Close closes both.
func NewSpooled(inner Ledger, spoolPath string, opt SpoolOptions) (*Spooled, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.RetryInterval <= 0 {
		opt.RetryInterval = 5 * time.Second
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = 256
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	sp, err := OpenSpool(spoolPath)
	if err != nil {
		return nil, err
	}
	pending, rejected, err := sp.Len()
	if err != nil {
		sp.Close()
		return nil, err
	}
	if pending > 0 || rejected > 0 {
		opt.Logger.Warn("accounting spool holds records from an earlier run", "pending", pending, "rejected", rejected, "spool", spoolPath)
	}
	return &Spooled{inner: inner, spool: sp, opt: opt, pending: pending}, nil
}

// Record writes rec through to the ledger, or spools it (see Spooled).
// It fails only for an invalid record or when the spool itself cannot be
// written; then the record was not kept.
func (s *Spooled) Record(ctx context.Context, rec JobRecord) error {
	return s.RecordMany(ctx, []JobRecord{rec})
}

// RecordMany is Record for several records, kept in order.
func (s *Spooled) RecordMany(ctx context.Context, in []JobRecord) error {
	recs := make([]JobRecord, len(in))
	for i := range in {
		p, err := prepare(in[i])
		if err != nil {
			return err
		}
		recs[i] = p
	}
	s.mu.Lock()
	if s.pending > 0 && !s.opt.Now().Before(s.retryAt) {
		s.drainLocked(ctx) //nolint:errcheck // the failure is kept in lastFail and logged
	}
	if s.pending > 0 || s.opt.Now().Before(s.retryAt) {
		defer s.mu.Unlock()
		return s.spoolLocked(recs)
	}
	// Nothing queued: write without the lock, so concurrent callers share
	// the ledger's transactions. Calls that overlap have no order to keep;
	// a caller's own records stay in order because it waits for each.
	s.mu.Unlock()
	err := s.write(ctx, recs)
	if err == nil || errors.Is(err, ErrInvalidRecord) {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed(err)
	return s.spoolLocked(recs)
}

// spoolLocked appends recs behind everything spooled.
func (s *Spooled) spoolLocked(recs []JobRecord) error {
	if err := s.spool.Append(recs...); err != nil {
		return fmt.Errorf("store: ledger unavailable (%v) and %w", s.lastFail, err)
	}
	s.pending += len(recs)
	return nil
}

// write hands recs to the ledger in one transaction when it can batch.
func (s *Spooled) write(ctx context.Context, recs []JobRecord) error {
	if b, ok := s.inner.(BatchRecorder); ok {
		return b.RecordMany(ctx, recs)
	}
	for _, r := range recs {
		if err := s.inner.Record(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

func (s *Spooled) failed(err error) {
	if s.lastFail == nil {
		s.opt.Logger.Warn("accounting ledger unavailable; spooling records", "err", err)
	}
	s.lastFail = err
	s.retryAt = s.opt.Now().Add(s.opt.RetryInterval)
}

// Drain writes spooled records to the ledger, oldest first, until the
// spool is empty or the ledger fails; it returns how many were written.
func (s *Spooled) Drain(ctx context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.drainLocked(ctx)
}

func (s *Spooled) drainLocked(ctx context.Context) (int, error) {
	written := 0
	for s.pending > 0 {
		batch, err := s.spool.Peek(s.opt.BatchSize)
		if err != nil {
			return written, err
		}
		if len(batch) == 0 {
			s.pending = 0
			break
		}
		recs := make([]JobRecord, len(batch))
		for i, b := range batch {
			recs[i] = b.rec
		}
		err = s.write(ctx, recs)
		if errors.Is(err, ErrInvalidRecord) {
			// The ledger refuses one of them for good (they were valid when
			// spooled, so its rules changed): set the first aside and go on.
			if rerr := s.spool.Reject(batch[0].seq); rerr != nil {
				return written, rerr
			}
			s.opt.Logger.Error("accounting ledger rejected a spooled record; kept in the spool's rejected bucket", "job", batch[0].rec.JobID, "err", err)
			s.pending--
			continue
		}
		if err != nil {
			s.failed(err)
			return written, fmt.Errorf("store: drain spool: %w", err)
		}
		if err := s.spool.Remove(batch[len(batch)-1].seq); err != nil {
			return written, err
		}
		written += len(batch)
		s.pending -= len(batch)
	}
	if s.lastFail != nil {
		s.opt.Logger.Info("accounting ledger back; spool drained", "written", written)
		s.lastFail, s.retryAt = nil, time.Time{}
	}
	return written, nil
}

// Pending is the number of records waiting in the spool.
func (s *Spooled) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

// Run drains the spool on every tick until ctx ends (the controller passes
// a time.Ticker's channel).
func (s *Spooled) Run(ctx context.Context, ticks <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			if s.Pending() > 0 {
				s.Drain(ctx) //nolint:errcheck // logged; retried next tick
			}
		}
	}
}

// Query drains what it can, then asks the ledger; spooled records the
// ledger has not taken yet are not in the answer.
func (s *Spooled) Query(ctx context.Context, f Filter) ([]JobRecord, error) {
	s.tryDrain(ctx)
	return s.inner.Query(ctx, f)
}

// Usage drains what it can, then asks the ledger.
func (s *Spooled) Usage(ctx context.Context, since, until time.Time) ([]Span, error) {
	s.tryDrain(ctx)
	return s.inner.Usage(ctx, since, until)
}

func (s *Spooled) tryDrain(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending > 0 && !s.opt.Now().Before(s.retryAt) {
		s.drainLocked(ctx) //nolint:errcheck // logged; retried later
	}
}

// Close closes the spool and the ledger; spooled records stay on disk for
// the next NewSpooled.
func (s *Spooled) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.spool.Close(), s.inner.Close())
}
