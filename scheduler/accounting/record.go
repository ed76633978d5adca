package accounting

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidRecord is wrapped when a record cannot be stored as given; a
// store rejects such records at once rather than spooling them.
var ErrInvalidRecord = errors.New("accounting: invalid job record")

// Step names with a meaning of their own; numbered steps are "0", "1", ….
const (
	StepBatch       = "batch"
	StepExtern      = "extern"
	StepInteractive = "interactive"
)

// JobRecord is one ledger line: a job allocation (Step "") or one of its
// steps, for one run of the job. (JobID, Run, Step) identifies it; writing
// the same key again replaces the line, so the controller may record a job
// at start and again at end, and a requeued job is accounted once per run.
type JobRecord struct {
	JobID uint64
	// ArrayJobID is the array's first job ID for an array task (0 otherwise),
	// ArrayTaskID its index within the array.
	ArrayJobID  uint64
	ArrayTaskID uint32
	Run         int    // restart count: 0 for the first run, +1 per requeue
	Step        string // "" for the allocation; batch, extern, interactive or a step number

	Name      string
	User      string // lower case, as Slurm keeps it
	Account   string
	Partition string
	QOS       string

	// Zero times are unknown (sacct prints "Unknown").
	Submit   time.Time
	Eligible time.Time
	Start    time.Time
	End      time.Time

	State       JobState
	CancelledBy string // user who cancelled it (State CANCELLED), shown "CANCELLED by <who>"
	ExitCode    int
	ExitSignal  int
	// DerivedExitCode and DerivedSignal (allocation lines): the highest
	// exit status of the run's numbered steps, as Slurm derives it
	// (DeriveExitCode).
	DerivedExitCode int
	DerivedSignal   int

	NodeList  string        // hostlist form, e.g. gpu[01-02]
	NNodes    int           //
	Timelimit time.Duration // 0: unlimited

	ReqTRES   TRES
	AllocTRES TRES // includes billing once allocated
	GPUUUIDs  []string
	Usage     JobUsage

	// The decision log entries that started and ended this run.
	StartDecision string
	EndDecision   string
}

// JobUsage is what the job measurably consumed.
type JobUsage struct {
	CPUTime      time.Duration // user+system CPU time (sacct TotalCPU)
	MaxRSSMiB    float64       // peak resident memory
	GPUUtilMean  float64       // percent, mean over the run and the job's GPUs
	GPUUtilMax   float64       // percent
	GPUMemMaxMiB float64       // peak GPU memory
}

// Normalize lower-cases names Slurm keeps lower case and cuts times to
// whole seconds, the ledger's resolution; Record stores normalised records.
func (r *JobRecord) Normalize() {
	r.User = strings.ToLower(strings.TrimSpace(r.User))
	r.Account = strings.ToLower(strings.TrimSpace(r.Account))
	r.Partition = strings.TrimSpace(r.Partition)
	r.QOS = strings.TrimSpace(r.QOS)
	for _, t := range []*time.Time{&r.Submit, &r.Eligible, &r.Start, &r.End} {
		if !t.IsZero() {
			*t = time.Unix(t.Unix(), 0).UTC()
		}
	}
	r.Timelimit = r.Timelimit.Truncate(time.Second)
	r.Usage.CPUTime = r.Usage.CPUTime.Truncate(time.Millisecond)
}

// ValidStep reports whether step names an allocation, a named or a numbered step.
func ValidStep(step string) bool {
	switch step {
	case "", StepBatch, StepExtern, StepInteractive:
		return true
	}
	_, err := strconv.ParseUint(step, 10, 32)
	return err == nil
}

// Validate checks what a store relies on; errors wrap ErrInvalidRecord and
// name the field.
func (r *JobRecord) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: job %d run %d step %q: %s", ErrInvalidRecord, r.JobID, r.Run, r.Step, fmt.Sprintf(format, a...))
	}
	switch {
	case r.JobID == 0:
		return bad("JobID must be positive")
	case r.Run < 0:
		return bad("Run=%d must not be negative", r.Run)
	case !ValidStep(r.Step):
		return bad("Step=%q is not batch, extern, interactive or a step number", r.Step)
	case r.User == "":
		return bad("User is empty")
	case !r.State.Valid():
		return bad("State=%q is not a job state", r.State)
	case !r.Start.IsZero() && !r.End.IsZero() && r.End.Before(r.Start):
		return bad("End %s is before Start %s", r.End.Format(time.RFC3339), r.Start.Format(time.RFC3339))
	case r.NNodes < 0:
		return bad("NNodes=%d must not be negative", r.NNodes)
	case r.Timelimit < 0:
		return bad("Timelimit=%v must not be negative", r.Timelimit)
	}
	for _, u := range r.GPUUUIDs {
		if u == "" || strings.ContainsAny(u, ", \t\n") {
			return bad("GPU UUID %q is empty or contains a separator", u)
		}
	}
	for _, t := range []struct {
		field string
		tres  TRES
	}{{"ReqTRES", r.ReqTRES}, {"AllocTRES", r.AllocTRES}} {
		for n, v := range t.tres {
			if !validTRESName(n) || v < 0 || v != v {
				return bad("%s entry %q=%v is invalid", t.field, n, v)
			}
		}
	}
	return nil
}

// IDString is sacct's JobID: 123, 123.batch, an array task 456_7, 456_7.0.
func (r *JobRecord) IDString() string {
	id := strconv.FormatUint(r.JobID, 10)
	if r.ArrayJobID != 0 {
		id = strconv.FormatUint(r.ArrayJobID, 10) + "_" + strconv.FormatUint(uint64(r.ArrayTaskID), 10)
	}
	return withStep(id, r.Step)
}

// RawIDString is sacct's JobIDRaw: the job's own numeric ID with its step.
func (r *JobRecord) RawIDString() string {
	return withStep(strconv.FormatUint(r.JobID, 10), r.Step)
}

func withStep(id, step string) string {
	if step == "" {
		return id
	}
	return id + "." + step
}

// Begin is the time the record entered the window sacct selects on: when
// it became eligible, else when it was submitted, else when it started.
func (r *JobRecord) Begin() time.Time {
	for _, t := range []time.Time{r.Eligible, r.Submit, r.Start} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// Elapsed is the run time at now: End−Start, now−Start while running,
// zero before the start.
func (r *JobRecord) Elapsed(now time.Time) time.Duration {
	switch {
	case r.Start.IsZero():
		return 0
	case r.End.IsZero():
		if now.Before(r.Start) {
			return 0
		}
		return now.Sub(r.Start).Truncate(time.Second)
	}
	return r.End.Sub(r.Start)
}

// stepRank orders steps as sacct lists them: allocation, batch, extern,
// interactive, then numbered steps.
func stepRank(step string) (int, uint64) {
	switch step {
	case "":
		return 0, 0
	case StepBatch:
		return 1, 0
	case StepExtern:
		return 2, 0
	case StepInteractive:
		return 3, 0
	}
	n, _ := strconv.ParseUint(step, 10, 64)
	return 4, n
}

// SortRecords orders records as sacct prints them: by job ID, then run,
// then the allocation before its steps.
func SortRecords(recs []JobRecord) {
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := &recs[i], &recs[j]
		if a.JobID != b.JobID {
			return a.JobID < b.JobID
		}
		if a.Run != b.Run {
			return a.Run < b.Run
		}
		ra, na := stepRank(a.Step)
		rb, nb := stepRank(b.Step)
		if ra != rb {
			return ra < rb
		}
		return na < nb
	})
}

// LatestRuns keeps only the lines of each job's highest run present, which
// is what sacct shows without -D/--duplicates. Order is preserved.
func LatestRuns(recs []JobRecord) []JobRecord {
	latest := make(map[uint64]int, len(recs))
	for i := range recs {
		if run, ok := latest[recs[i].JobID]; !ok || recs[i].Run > run {
			latest[recs[i].JobID] = recs[i].Run
		}
	}
	out := recs[:0:0]
	for _, r := range recs {
		if r.Run == latest[r.JobID] {
			out = append(out, r)
		}
	}
	return out
}
