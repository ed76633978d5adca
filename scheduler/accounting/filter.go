package accounting

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrBadFilter is wrapped by filter parse errors (sacct -j, -u, …).
var ErrBadFilter = errors.New("accounting: invalid filter")

// JobSelector is one sacct -j element: 123 (the job, or every task of
// array 123), 123_4 (one array task), each optionally with .step.
type JobSelector struct {
	ID      uint64
	Task    int64  // array task index; -1 when not given
	Step    string // "" for any line of the job
	HasStep bool
}

// ParseJobSelectors reads "123,456_7,789.batch,42_3.0".
func ParseJobSelectors(list string) ([]JobSelector, error) {
	var out []JobSelector
	for _, p := range strings.Split(list, ",") {
		sel, err := parseJobSelector(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%w: job %q in %q: %w", ErrBadFilter, p, list, err)
		}
		out = append(out, sel)
	}
	return out, nil
}

func parseJobSelector(s string) (JobSelector, error) {
	sel := JobSelector{Task: -1}
	if s == "" {
		return sel, errors.New("empty job ID")
	}
	if id, step, ok := strings.Cut(s, "."); ok {
		if step == "" || !ValidStep(step) {
			return sel, fmt.Errorf("step %q is not batch, extern, interactive or a number", step)
		}
		s, sel.Step, sel.HasStep = id, step, true
	}
	if id, task, ok := strings.Cut(s, "_"); ok {
		n, err := strconv.ParseUint(task, 10, 32)
		if err != nil {
			return sel, fmt.Errorf("array task %q is not a number", task)
		}
		s, sel.Task = id, int64(n)
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return sel, fmt.Errorf("job ID %q is not a positive number", s)
	}
	sel.ID = id
	return sel, nil
}

// Matches reports whether r is selected.
func (s JobSelector) Matches(r *JobRecord) bool {
	if s.HasStep && r.Step != s.Step {
		return false
	}
	if s.Task >= 0 {
		return r.ArrayJobID == s.ID && int64(r.ArrayTaskID) == s.Task
	}
	return r.JobID == s.ID || r.ArrayJobID == s.ID
}

// Filter selects ledger lines. Empty lists and zero times do not restrict.
type Filter struct {
	Users      []string
	Accounts   []string
	Partitions []string
	QOS        []string
	Names      []string // job names
	States     []JobState
	Jobs       []JobSelector
	// Start and End bound the window: a line is selected when it had begun
	// (eligible, else submitted, else started) by End and had not ended
	// before Start.
	Start, End time.Time
	// AllocationsOnly hides steps (sacct -X).
	AllocationsOnly bool
	// Duplicates keeps every run of a requeued job (sacct -D); otherwise a
	// query returns only each job's latest run.
	Duplicates bool
}

// Matches is the reference meaning of f for one line; a store may compute
// it another way (SQL) but must select exactly the same lines.
func (f *Filter) Matches(r *JobRecord) bool {
	if f.AllocationsOnly && r.Step != "" {
		return false
	}
	if !in(f.Users, r.User) || !in(f.Accounts, r.Account) || !in(f.Partitions, r.Partition) ||
		!in(f.QOS, r.QOS) || !in(f.Names, r.Name) {
		return false
	}
	if len(f.States) > 0 {
		if !slices.ContainsFunc(f.States, func(s JobState) bool { return f.inStateDuring(r, s) }) {
			return false
		}
	} else if !f.overlaps(r) {
		return false
	}
	if len(f.Jobs) == 0 {
		return true
	}
	for _, s := range f.Jobs {
		if s.Matches(r) {
			return true
		}
	}
	return false
}

// overlaps says the record's life (eligible to end) meets the window.
// Whole seconds, the ledger's resolution.
func (f *Filter) overlaps(r *JobRecord) bool {
	if !f.End.IsZero() && r.Begin().Unix() > f.End.Unix() {
		return false
	}
	return f.Start.IsZero() || r.End.IsZero() || r.End.Unix() >= f.Start.Unix()
}

// inStateDuring says the record was in state s during the window, as
// slurmdbd selects for sacct -s: pending or running at some time in it,
// or ended in state s within it. So -s R lists the jobs that ran in the
// window whatever they ended as (the anchor's sacct -s CA,R -E now lists
// completed jobs beside the cancelled one).
func (f *Filter) inStateDuring(r *JobRecord, s JobState) bool {
	before := func(t time.Time) bool { return f.End.IsZero() || t.Unix() <= f.End.Unix() }
	after := func(t time.Time) bool { return f.Start.IsZero() || t.Unix() >= f.Start.Unix() }
	switch s {
	case StatePending:
		b := r.Begin()
		return !b.IsZero() && before(b) && (r.Start.IsZero() || after(r.Start))
	case StateRunning:
		return !r.Start.IsZero() && before(r.Start) && (r.End.IsZero() || after(r.End))
	}
	return r.State == s && !r.End.IsZero() && after(r.End) && before(r.End)
}

func in[T comparable](list []T, v T) bool {
	if len(list) == 0 {
		return true
	}
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// SplitList splits a comma-separated flag value (sacct -u a,b), rejecting
// empty elements; flag names the option in the error.
func SplitList(flag, list string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("%w: %s %q has an empty element", ErrBadFilter, flag, list)
		}
		out = append(out, p)
	}
	return out, nil
}

// WindowInput is what the user said about sacct's time window.
type WindowInput struct {
	Start, End string // -S/-E as typed; "" when absent
	HaveJobs   bool   // -j given
	HaveStates bool   // -s given
}

// ResolveWindow applies sacct's defaults: -S/-E as given (Slurm time
// forms); without -S, jobs since midnight today, or since the epoch with
// -j, or only those in the state at now with -s alone; -E defaults to now,
// or with -s to the start.
// Errors name the flag.
func ResolveWindow(in WindowInput, now time.Time, loc *time.Location) (start, end time.Time, err error) {
	end = now
	if in.End != "" {
		if end, err = ParseTime(in.End, now, loc); err != nil {
			return start, end, fmt.Errorf("--endtime: %w", err)
		}
	}
	switch {
	case in.Start != "":
		if start, err = ParseTime(in.Start, now, loc); err != nil {
			return start, end, fmt.Errorf("--starttime: %w", err)
		}
	case in.HaveJobs:
		start = time.Unix(0, 0).UTC()
	case in.HaveStates && in.End == "":
		start = now
	default:
		start = midnight(now.In(loc))
	}
	if in.HaveStates && in.End == "" {
		// With -s the window ends where it starts unless -E is given:
		// the anchor's sacct -s CD -S now-2minutes lists no job that
		// completed since, and with -E now lists them.
		end = start
	}
	if end.Before(start) {
		return start, end, fmt.Errorf("%w: --endtime %s is before --starttime %s", ErrBadFilter,
			end.In(loc).Format(timeLayout), start.In(loc).Format(timeLayout))
	}
	return start, end, nil
}
