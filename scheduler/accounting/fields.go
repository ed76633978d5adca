package accounting

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrBadFormat is wrapped when a --format field list cannot be used.
var ErrBadFormat = errors.New("accounting: invalid --format")

// View is what rendering needs beyond the records: the time "now" (for
// running jobs' Elapsed) and the zone times are printed in.
type View struct {
	Now time.Time
	Loc *time.Location
	// UID, when set, gives a user's numeric id: sacct's State names who
	// cancelled a job by uid ("CANCELLED by 0"); a user it does not know
	// stays named.
	UID func(user string) (string, bool)
}

func (v View) loc() *time.Location {
	if v.Loc == nil {
		return time.UTC
	}
	return v.Loc
}

// Field is one sacct column: its name, default width (negative: left
// aligned) and how a record prints in it.
type Field struct {
	Name  string
	Width int
	value func(r *JobRecord, v View) string
}

// Value prints r in this field.
func (f Field) Value(r *JobRecord, v View) string { return f.value(r, v) }

// Column is a field with the width it prints at.
type Column struct {
	Field Field
	Width int // negative: left aligned, as sacct's %-NN
}

// Header is the column's title.
func (c Column) Header() string { return c.Field.Name }

// Default field lists (sacct default, -b brief, -l long).
const (
	DefaultFormat = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode"
	BriefFormat   = "JobID,State,ExitCode"
	LongFormat    = "JobID,JobIDRaw,JobName,Partition,Account,User,QOS,AllocCPUS,AllocNodes,AllocTRES,ReqTRES," +
		"Elapsed,Timelimit,CPUTime,TotalCPU,MaxRSS,TRESUsageInAve,TRESUsageInMax,State,ExitCode,Submit,Start,End,NodeList"
)

// alloc is true for the job allocation line: sacct leaves some job-level
// columns (User, Partition, Timelimit) empty on step lines.
func alloc(r *JobRecord) bool { return r.Step == "" }

func onAlloc(s func(r *JobRecord) string) func(*JobRecord, View) string {
	return func(r *JobRecord, _ View) string {
		if !alloc(r) {
			return ""
		}
		return s(r)
	}
}

func onAllocAt(s func(r *JobRecord, v View) string) func(*JobRecord, View) string {
	return func(r *JobRecord, v View) string {
		if !alloc(r) {
			return ""
		}
		return s(r, v)
	}
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// fields is the immutable registry of sacct columns Parity prints. The
// last three are Parity's own (GPU identities and decision log entries).
var fields = []Field{
	{"JobID", -12, func(r *JobRecord, _ View) string { return r.IDString() }},
	{"JobIDRaw", -12, func(r *JobRecord, _ View) string { return r.RawIDString() }},
	{"JobName", 10, func(r *JobRecord, _ View) string {
		// sacct names batch/extern/interactive lines after the step;
		// numbered steps carry their own name (the srun command).
		switch r.Step {
		case "":
			return r.Name
		case StepBatch, StepExtern, StepInteractive:
			return r.Step
		}
		if r.Name == "" {
			return r.Step
		}
		return r.Name
	}},
	{"User", 9, onAlloc(func(r *JobRecord) string { return r.User })},
	{"Account", 10, func(r *JobRecord, _ View) string { return r.Account }},
	{"Partition", 10, onAlloc(func(r *JobRecord) string { return r.Partition })},
	{"QOS", 10, onAlloc(func(r *JobRecord) string { return r.QOS })},
	{"AllocCPUS", 10, func(r *JobRecord, _ View) string { return num(r.AllocTRES[TRESCPU]) }},
	{"NCPUS", 10, func(r *JobRecord, _ View) string { return num(r.AllocTRES[TRESCPU]) }},
	{"AllocNodes", 10, func(r *JobRecord, _ View) string { return strconv.Itoa(r.NNodes) }},
	{"NNodes", 8, func(r *JobRecord, _ View) string { return strconv.Itoa(r.NNodes) }},
	{"NodeList", -15, func(r *JobRecord, _ View) string {
		if r.NodeList == "" {
			return "None assigned"
		}
		return r.NodeList
	}},
	{"AllocTRES", -12, func(r *JobRecord, _ View) string { return r.AllocTRES.String() }},
	{"ReqTRES", -12, func(r *JobRecord, _ View) string { return r.ReqTRES.String() }},
	{"ReqMem", 10, func(r *JobRecord, _ View) string {
		if m := r.ReqTRES[TRESMem]; m > 0 {
			return FormatMiB(m)
		}
		return ""
	}},
	// ReqCPUS and ReqNodes are the job's request, on every line as sacct prints them.
	{"ReqCPUS", 8, func(r *JobRecord, _ View) string { return num(r.ReqTRES[TRESCPU]) }},
	{"ReqNodes", 8, func(r *JobRecord, _ View) string { return num(r.ReqTRES[TRESNode]) }},
	{"AllocGPUS", 10, func(r *JobRecord, _ View) string { return num(r.AllocTRES.GPUs()) }},
	{"Elapsed", 10, func(r *JobRecord, v View) string { return FormatDuration(r.Elapsed(v.Now)) }},
	{"ElapsedRaw", 10, func(r *JobRecord, v View) string { return strconv.FormatInt(int64(r.Elapsed(v.Now)/time.Second), 10) }},
	{"Timelimit", 10, onAlloc(func(r *JobRecord) string {
		if r.Timelimit == 0 {
			return "UNLIMITED"
		}
		return FormatDuration(r.Timelimit)
	})},
	{"TimelimitRaw", 10, onAlloc(func(r *JobRecord) string {
		if r.Timelimit == 0 {
			return "UNLIMITED"
		}
		return strconv.FormatInt(int64(r.Timelimit/time.Minute), 10)
	})},
	// Reserved is how long the job waited between eligible and start
	// (until now while it pends).
	{"Reserved", 10, onAllocAt(func(r *JobRecord, v View) string {
		if r.Eligible.IsZero() {
			return FormatDuration(0)
		}
		until := r.Start
		if until.IsZero() {
			until = v.Now
		}
		return FormatDuration(max(until.Sub(r.Eligible), 0))
	})},
	{"CPUTime", 10, func(r *JobRecord, v View) string {
		return FormatDuration(time.Duration(r.AllocTRES[TRESCPU] * float64(r.Elapsed(v.Now))))
	}},
	{"CPUTimeRAW", 10, func(r *JobRecord, v View) string {
		return strconv.FormatInt(int64(r.AllocTRES[TRESCPU]*r.Elapsed(v.Now).Seconds()), 10)
	}},
	{"TotalCPU", 10, func(r *JobRecord, _ View) string { return FormatCPUTime(r.Usage.CPUTime) }},
	{"MaxRSS", 10, func(r *JobRecord, _ View) string {
		if r.Usage.MaxRSSMiB == 0 {
			return ""
		}
		// sacct prints MaxRSS in KiB with a K suffix (2053152K), whatever
		// its size, and scripts parse it so.
		return strconv.FormatInt(int64(math.Round(r.Usage.MaxRSSMiB*1024)), 10) + "K"
	}},
	{"TRESUsageInAve", -14, func(r *JobRecord, _ View) string {
		return usageTRES(r, r.Usage.GPUUtilMean).String()
	}},
	{"TRESUsageInMax", -14, func(r *JobRecord, _ View) string {
		return usageTRES(r, r.Usage.GPUUtilMax).String()
	}},
	{"State", 10, func(r *JobRecord, v View) string {
		if r.State == StateCancelled && r.CancelledBy != "" {
			by := r.CancelledBy
			if v.UID != nil {
				if uid, ok := v.UID(by); ok {
					by = uid
				}
			}
			return string(r.State) + " by " + by
		}
		return string(r.State)
	}},
	{"ExitCode", 8, func(r *JobRecord, _ View) string { return fmt.Sprintf("%d:%d", r.ExitCode, r.ExitSignal) }},
	// sacct prints the derived exit code on the allocation line only.
	{"DerivedExitCode", 15, onAlloc(func(r *JobRecord) string { return fmt.Sprintf("%d:%d", r.DerivedExitCode, r.DerivedSignal) })},
	{"Submit", 19, func(r *JobRecord, v View) string { return FormatTime(r.Submit, v.loc()) }},
	{"Eligible", 19, func(r *JobRecord, v View) string { return FormatTime(r.Eligible, v.loc()) }},
	{"Start", 19, func(r *JobRecord, v View) string { return FormatTime(r.Start, v.loc()) }},
	{"End", 19, func(r *JobRecord, v View) string { return FormatTime(r.End, v.loc()) }},
	{"Restarts", 8, func(r *JobRecord, _ View) string { return strconv.Itoa(r.Run) }},
	{"GPUUUIDs", -40, func(r *JobRecord, _ View) string { return strings.Join(r.GPUUUIDs, ",") }},
	{"StartDecision", -20, func(r *JobRecord, _ View) string { return r.StartDecision }},
	{"EndDecision", -20, func(r *JobRecord, _ View) string { return r.EndDecision }},
}

// usageTRES is the measured usage as TRES (sacct's TRESUsageIn*): memory,
// GPU memory and GPU utilisation (gpuutil in percent).
func usageTRES(r *JobRecord, gpuUtil float64) TRES {
	t := TRES{TRESMem: r.Usage.MaxRSSMiB, TRESGPUMem: r.Usage.GPUMemMaxMiB, TRESGPUUtil: gpuUtil}
	if r.Usage.CPUTime > 0 {
		t[TRESCPU] = float64(r.Usage.CPUTime / time.Second)
	}
	return t
}

// LookupField finds a field by name, case-insensitively.
func LookupField(name string) (Field, bool) {
	for _, f := range fields {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return Field{}, false
}

// FieldNames lists every field name, sorted (sacct --helpformat).
func FieldNames() []string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	sort.Strings(names)
	return names
}

// ParseFormat reads a --format list, "JobID,JobName%30,State%-12": each
// field name with an optional %width (negative: left aligned). Errors name
// the field.
func ParseFormat(spec string) ([]Column, error) {
	var cols []Column
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		name, width, hasWidth := strings.Cut(item, "%")
		if name == "" {
			return nil, fmt.Errorf("%w: empty field in %q", ErrBadFormat, spec)
		}
		f, err := resolveField(name)
		if err != nil {
			return nil, err
		}
		c := Column{Field: f, Width: f.Width}
		if hasWidth {
			w, err := strconv.Atoi(width)
			if err != nil || w == 0 || w > 1000 || w < -1000 {
				return nil, fmt.Errorf("%w: field %q: width %q is not a non-zero number", ErrBadFormat, name, width)
			}
			c.Width = w
		}
		cols = append(cols, c)
	}
	return cols, nil
}
