package trace

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// swfFields is the number of fields of an SWF record.
const swfFields = 18

// maxLine bounds one line; longer lines are corrupt input, not a trace.
const maxLine = 1 << 20

// SWF field positions (0-based) this reader uses.
const (
	fJob = iota
	fSubmit
	fWait
	fRun
	fProcs
	fCPU
	fMem
	fReqProcs
	fReqTime
	fReqMem
	fStatus
	fUser
	fGroup
)

var swfFieldNames = [swfFields]string{
	"job number (1)", "submit time (2)", "wait time (3)", "run time (4)",
	"allocated processors (5)", "average CPU time (6)", "used memory (7)",
	"requested processors (8)", "requested time (9)", "requested memory (10)",
	"status (11)", "user id (12)", "group id (13)", "executable number (14)",
	"queue number (15)", "partition number (16)", "preceding job (17)", "think time (18)",
}

// ReadSWF reads a Standard Workload Format trace. Header comments ("; Key:
// value") are kept and MaxProcs, MaxNodes, UnixStartTime and MaxRuntime are
// parsed. Records follow the format's rules: -1 means unknown; status 2-4
// lines are checkpoint/swap partials of a job whose summary line (status
// 0, 1 or 5) carries the whole run, so they are skipped; a cancelled job
// with no runtime never ran and is skipped; processors are the allocated
// count, else the requested one (the requested count is kept as well, in
// RequestedProcs). Time fields may be fractional and are
// rounded to whole seconds. A corrupt line (not 18 fields, a non-number, a
// value no field may take) is counted with its line number, or returned as
// the error in strict mode. Read errors are returned wrapped.
func ReadSWF(r io.Reader, opts Options) (*Trace, error) {
	t := &Trace{Format: FormatSWF}
	c := collector{t: t, opts: opts}
	names := interner{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var fields [swfFields]string
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		body := strings.TrimLeft(text, " \t\r")
		if body == "" || strings.TrimSpace(body) == "" {
			continue
		}
		if body[0] == ';' {
			if err := parseSWFHeader(&t.Header, body[1:], line, &c); err != nil {
				return nil, err
			}
			continue
		}
		t.Records++
		n := splitFields(body, fields[:])
		if n != swfFields {
			if err := c.bad(&LineError{Line: line, Reason: fmt.Sprintf("has %d fields, SWF records have %d", n, swfFields)}); err != nil {
				return nil, err
			}
			continue
		}
		job, skip, lerr := swfRecord(&fields, line, names)
		switch {
		case lerr != nil:
			if err := c.bad(lerr); err != nil {
				return nil, err
			}
		case skip != keep:
			t.Skipped.add(skip)
		default:
			t.Jobs = append(t.Jobs, job)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("trace: reading SWF after line %d: %w", line, err)
	}
	sortJobs(t.Jobs)
	return t, nil
}

// swfRecord validates one 18-field record. It returns the job (skip ==
// keep), or why a well-formed record is not replayed, or the line's error.
func swfRecord(f *[swfFields]string, line int, names interner) (Job, skipKind, *LineError) {
	var v [swfFields]float64
	for i := range f {
		x, err := parseNumber(f[i])
		if err != nil {
			return Job{}, keep, &LineError{Line: line, Field: swfFieldNames[i], Value: f[i], Reason: err.Error()}
		}
		v[i] = x
	}
	badIf := func(i int, cond bool, why string) *LineError {
		if cond {
			return &LineError{Line: line, Field: swfFieldNames[i], Value: f[i], Reason: why}
		}
		return nil
	}
	for _, e := range []*LineError{
		badIf(fJob, v[fJob] != math.Trunc(v[fJob]), "must be an integer"),
		badIf(fSubmit, v[fSubmit] < 0, "must not be negative"),
		badIf(fWait, v[fWait] < -1, "must be -1 (unknown) or more"),
		badIf(fRun, v[fRun] < -1, "must be -1 (unknown) or more"),
		badIf(fProcs, v[fProcs] < -1 || v[fProcs] != math.Trunc(v[fProcs]), "must be a whole number, -1 (unknown) or more"),
		badIf(fReqProcs, v[fReqProcs] < -1 || v[fReqProcs] != math.Trunc(v[fReqProcs]), "must be a whole number, -1 (unknown) or more"),
		badIf(fReqTime, v[fReqTime] < -1, "must be -1 (unknown) or more"),
		badIf(fStatus, v[fStatus] != math.Trunc(v[fStatus]) || v[fStatus] < -1 || v[fStatus] > 5, "must be -1 or 0-5"),
		badIf(fUser, v[fUser] < -1 || v[fUser] != math.Trunc(v[fUser]), "must be a whole number, -1 (unknown) or more"),
		badIf(fGroup, v[fGroup] < -1 || v[fGroup] != math.Trunc(v[fGroup]), "must be a whole number, -1 (unknown) or more"),
		badIf(fProcs, v[fProcs] > math.MaxInt32, "is larger than any machine"),
		badIf(fReqProcs, v[fReqProcs] > math.MaxInt32, "is larger than any machine"),
		badIf(fSubmit, v[fSubmit] > 1<<40, "is implausibly far in the future"),
		badIf(fRun, v[fRun] > 1<<40, "is implausibly long"),
		badIf(fReqTime, v[fReqTime] > 1<<40, "is implausibly long"),
	} {
		if e != nil {
			return Job{}, keep, e
		}
	}
	j := Job{
		ID:           int64(v[fJob]),
		Line:         line,
		Submit:       int64(math.Round(v[fSubmit])),
		Runtime:      int64(math.Round(v[fRun])),
		Procs:        int(v[fProcs]),
		Status:       int(v[fStatus]),
		RecordedWait: -1,
		User:         names.id("u", int64(v[fUser])),
		Account:      names.id("g", int64(v[fGroup])),
	}
	if v[fWait] >= 0 {
		j.RecordedWait = int64(math.Round(v[fWait]))
	}
	if v[fReqTime] > 0 {
		j.Requested = max(int64(math.Round(v[fReqTime])), 1)
	}
	if v[fReqProcs] > 0 {
		j.RequestedProcs = int(v[fReqProcs])
	}
	if j.Procs <= 0 {
		j.Procs = j.RequestedProcs
	}
	if j.User == "" {
		j.User = "unknown"
	}
	switch {
	case j.Status >= 2 && j.Status <= 4:
		return Job{}, skipPartial, nil
	case j.Runtime <= 0 && j.Status == 5:
		return Job{}, skipCancelled, nil
	case j.Runtime <= 0:
		return Job{}, skipNoRuntime, nil
	case j.Procs <= 0:
		return Job{}, skipNoProcs, nil
	}
	return j, keep, nil
}

// parseSWFHeader reads one "; Key: value" comment into h.
func parseSWFHeader(h *Header, body string, line int, c *collector) error {
	body = strings.TrimSpace(body)
	i := strings.IndexByte(body, ':')
	if i <= 0 || !isKey(body[:i]) || (i+1 < len(body) && body[i+1] != ' ' && body[i+1] != '\t') {
		return nil // a continuation or free text, not a key
	}
	key, val := body[:i], strings.TrimSpace(body[i+1:])
	h.Comments = append(h.Comments, Comment{Key: key, Value: val})
	var dst *int64
	var n64 int64
	switch key {
	case "MaxProcs", "MaxNodes":
		dst = &n64
	case "UnixStartTime":
		dst = &h.UnixStartTime
	case "MaxRuntime":
		dst = &h.MaxRuntime
	default:
		return nil
	}
	x, err := strconv.ParseInt(val, 10, 64)
	if err != nil || x < 0 && key != "UnixStartTime" || x > math.MaxInt32 && key != "UnixStartTime" {
		c.t.Records++
		return c.bad(&LineError{Line: line, Field: "header " + key, Value: val, Reason: "must be a non-negative whole number"})
	}
	*dst = x
	switch key {
	case "MaxProcs":
		h.MaxProcs = int(n64)
	case "MaxNodes":
		h.MaxNodes = int(n64)
	}
	return nil
}

func isKey(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_') {
			return false
		}
	}
	return true
}

// splitFields splits s on blanks into out without allocating and returns
// how many fields s has (which may exceed len(out)).
func splitFields(s string, out []string) int {
	n := 0
	for i := 0; i < len(s); {
		for i < len(s) && isBlank(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		for j < len(s) && !isBlank(s[j]) {
			j++
		}
		if n < len(out) {
			out[n] = s[i:j]
		}
		n++
		i = j
	}
	return n
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\v' || b == '\f' }

// parseNumber accepts integers and finite decimals.
func parseNumber(s string) (float64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return float64(n), nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("is not a number")
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("is not a finite number")
	}
	return x, nil
}
