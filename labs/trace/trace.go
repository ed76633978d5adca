package trace

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Errors the readers wrap; LineError unwraps to ErrSyntax.
var (
	// ErrSyntax marks a corrupt record or header value.
	ErrSyntax = errors.New("trace: malformed record")
	// ErrFormat reports input that is not a trace format this package reads.
	ErrFormat = errors.New("trace: unrecognised trace format")
)

// Format names a trace format.
type Format string

// Formats the readers understand.
const (
	FormatSWF    Format = "swf"
	FormatGPUCSV Format = "gpu-csv"
)

// Job is one replayable job. Times are whole seconds; Submit counts from the
// trace's start (SWF: UnixStartTime; CSV: the earliest submit).
type Job struct {
	// ID is the SWF job number or the CSV id column (else the data row number).
	ID int64
	// Line is the 1-based source line the job came from.
	Line int
	// Submit is the submit time, seconds from the trace start.
	Submit int64
	// Runtime is the recorded wall-clock run time (always > 0).
	Runtime int64
	// Requested is the requested time (user estimate or wall limit); 0 when
	// the trace does not say.
	Requested int64
	// Procs is what the job occupied: SWF processors (allocated, else
	// requested), or GPUs for a GPU CSV (always > 0).
	Procs int
	// RequestedProcs is the SWF requested processor count (field 8); 0
	// when the trace does not say (and for GPU CSV traces). Replays size
	// jobs by Procs unless asked to use the request.
	RequestedProcs int
	// Nodes is the node count the trace records; 0 means any.
	Nodes int
	// User and Account name who ran the job (SWF user and group ids as
	// "u12"/"g3"; a CSV's user and virtual-cluster columns). Account is
	// empty when unknown; User is never empty ("unknown" at worst).
	User, Account string
	// Status is the SWF status (1 completed, 0 failed, 5 cancelled, -1 unknown).
	Status int
	// RecordedWait is the wait the production system logged; -1 when unknown.
	RecordedWait int64
}

// Header holds a trace's header facts. Zero means absent.
type Header struct {
	MaxProcs, MaxNodes int
	// UnixStartTime is the wall-clock time (Unix seconds) of Submit 0.
	UnixStartTime int64
	// MaxRuntime is the longest run time the system allowed (seconds).
	MaxRuntime int64
	// Comments keeps every "Key: value" header comment in file order.
	Comments []Comment
}

// Comment is one SWF header comment.
type Comment struct{ Key, Value string }

// Skipped counts well-formed records a replay must not run, by why.
type Skipped struct {
	// Partial are SWF checkpoint/swap lines (status 2, 3, 4): the job's
	// summary line carries the whole run, so replaying both would double it.
	Partial int `json:"partial"`
	// Cancelled are jobs cancelled before they started (status 5, no runtime).
	Cancelled int `json:"cancelled"`
	// NoRuntime are jobs whose run time is unknown or not positive.
	NoRuntime int `json:"noRuntime"`
	// NoProcs are jobs with neither allocated nor requested processors (GPUs).
	NoProcs int `json:"noProcs"`
}

// skipKind says whether a well-formed record is replayed, and if not why.
type skipKind int

const (
	keep skipKind = iota
	skipPartial
	skipCancelled
	skipNoRuntime
	skipNoProcs
)

func (s *Skipped) add(k skipKind) {
	switch k {
	case skipPartial:
		s.Partial++
	case skipCancelled:
		s.Cancelled++
	case skipNoRuntime:
		s.NoRuntime++
	case skipNoProcs:
		s.NoProcs++
	}
}

// Total is the number of skipped records.
func (s Skipped) Total() int { return s.Partial + s.Cancelled + s.NoRuntime + s.NoProcs }

// Trace is a parsed workload.
type Trace struct {
	Format Format
	Header Header
	// Jobs are the replayable jobs, sorted by submit time (ties in file order).
	Jobs []Job
	// Records counts the data lines read: not blank lines or comments, except
	// a header comment whose value is corrupt, which counts as a bad record.
	Records int
	Skipped Skipped
	// BadLines counts corrupt lines; Errors keeps the first Options.KeepErrors of them.
	BadLines int
	Errors   []*LineError
}

// Options tune a reader.
type Options struct {
	// Strict fails on the first corrupt line instead of counting it.
	Strict bool
	// KeepErrors is how many LineErrors to keep (the count is always exact);
	// 0 means 100.
	KeepErrors int
}

func (o Options) keep() int {
	if o.KeepErrors <= 0 {
		return 100
	}
	return o.KeepErrors
}

// LineError is a corrupt line: where, which field, what value and why.
type LineError struct {
	Line   int
	Field  string
	Value  string
	Reason string
}

func (e *LineError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
	}
	return fmt.Sprintf("line %d: %s=%q: %s", e.Line, e.Field, e.Value, e.Reason)
}

// Unwrap lets errors.Is(err, ErrSyntax) match.
func (e *LineError) Unwrap() error { return ErrSyntax }

// collector gathers line errors under the strict/lenient rule.
type collector struct {
	t    *Trace
	opts Options
}

// bad records a corrupt line; it returns the error to stop on in strict mode.
func (c *collector) bad(e *LineError) error {
	if c.opts.Strict {
		return fmt.Errorf("trace: %w", e)
	}
	c.t.BadLines++
	if len(c.t.Errors) < c.opts.keep() {
		c.t.Errors = append(c.t.Errors, e)
	}
	return nil
}

// sortJobs orders jobs by submit time, keeping file order among equals.
// It sorts positions, not the (large) jobs, then permutes once.
func sortJobs(jobs []Job) {
	if slices.IsSortedFunc(jobs, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) }) {
		return
	}
	order := make([]int32, len(jobs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(jobs[a].Submit, jobs[b].Submit); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	sorted := make([]Job, len(jobs))
	for i, k := range order {
		sorted[i] = jobs[k]
	}
	copy(jobs, sorted)
}

// interner shares one string per distinct name: a million-job trace has a
// few hundred users.
type interner map[string]string

func (in interner) get(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	s = string([]byte(s)) // detach from the line buffer
	in[s] = s
	return s
}

func (in interner) id(prefix string, v int64) string {
	if v < 0 {
		return ""
	}
	var buf [24]byte
	b := append(buf[:0], prefix...)
	b = strconv.AppendInt(b, v, 10)
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	in[s] = s
	return s
}
