package store

import (
	"context"
	"errors"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
)

// Aliases so callers of the ledger need not import accounting for the basics.
type (
	JobRecord = accounting.JobRecord
	Filter    = accounting.Filter
	Span      = accounting.Span
)

// Errors the ledger returns (wrapped with the operation and its argument).
var (
	ErrClosed        = errors.New("store: ledger closed")
	ErrSchemaTooNew  = errors.New("store: ledger schema is newer than this program")
	ErrNeedsMigrate  = errors.New("store: ledger schema is older than this program; open it read-write once to migrate")
	ErrNotFound      = errors.New("store: ledger file not found")
	ErrInvalidRecord = accounting.ErrInvalidRecord
)

// Ledger is the accounting store. Implementations are safe for concurrent
// use.
//
// Record upserts one line keyed by (JobID, Run, Step): recording a job at
// start and again at end leaves one line holding the latest values, and a
// requeued job (Run+1) gets lines of its own, so each run is accounted
// once. Record is idempotent: writing the same record twice changes
// nothing. Invalid records fail with an error wrapping ErrInvalidRecord.
//
// Query returns the lines f selects (accounting.Filter.Matches is the
// reference meaning), sorted as sacct prints them, latest run only unless
// f.Duplicates.
//
// Usage returns the usage spans of every started run that overlaps
// [since, until): allocation lines only, since steps use the allocation's
// resources.
//
// Close releases the store; later calls fail with ErrClosed.
type Ledger interface {
	Record(ctx context.Context, rec JobRecord) error
	Query(ctx context.Context, f Filter) ([]JobRecord, error)
	Usage(ctx context.Context, since, until time.Time) ([]Span, error)
	Close() error
}

// BatchRecorder is an optional Ledger capability: RecordMany writes recs
// in one transaction (all or none), in order, with Record's upsert meaning.
type BatchRecorder interface {
	RecordMany(ctx context.Context, recs []JobRecord) error
}
