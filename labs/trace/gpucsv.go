package trace

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// CSV columns and the header names each accepts (case-insensitive).
// Philly's file (timestamp, duration, num_gpus, gpu_time, cluster) maps
// onto submit, runtime, gpus and account; unknown columns are ignored.
var csvColumns = []struct {
	col     csvCol
	aliases []string
}{
	{colID, []string{"id", "job", "job_id", "jobid"}},
	{colSubmit, []string{"submit", "submit_time", "submitted", "timestamp", "time"}},
	{colRuntime, []string{"runtime", "run_time", "duration", "run"}},
	{colGPUs, []string{"gpus", "num_gpus", "gpu_num", "ngpus", "gpu"}},
	{colNodes, []string{"nodes", "num_nodes", "nnodes", "node_num"}},
	{colUser, []string{"user", "username", "user_id", "uid"}},
	{colAccount, []string{"account", "vc", "cluster", "group", "virtual_cluster"}},
	{colRequested, []string{"requested", "requested_time", "time_limit", "timelimit", "walltime", "req_time"}},
}

type csvCol int

const (
	colID csvCol = iota
	colSubmit
	colRuntime
	colGPUs
	colNodes
	colUser
	colAccount
	colRequested
	numCols
)

var csvColNames = [numCols]string{"id", "submit", "runtime", "gpus", "nodes", "user", "account", "requested"}

// timestamp layouts accepted in the submit column besides plain seconds.
var csvTimeLayouts = []string{"2006-01-02 15:04:05", time.RFC3339, "2006-01-02T15:04:05"}

// ReadGPUCSV reads a CSV of GPU jobs. The first non-blank line names the
// columns; submit, runtime and gpus are required, and id, nodes, user,
// account (Philly's cluster column, a virtual cluster) and requested
// time are optional. Submit is seconds or a timestamp (YYYY-MM-DD
// hh:mm:ss, taken as UTC, or RFC 3339); times are rounded to whole
// seconds and made relative to the earliest submit, whose Unix time goes
// into Header.UnixStartTime. Rows need not be sorted. A job without a user
// runs as its account; with neither, as "unknown". Jobs with no positive
// runtime or GPUs are skipped and counted; corrupt rows are counted with
// their line numbers, or returned as the error in strict mode.
func ReadGPUCSV(r io.Reader, opts Options) (*Trace, error) {
	t := &Trace{Format: FormatGPUCSV}
	c := collector{t: t, opts: opts}
	names := interner{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var idx [numCols]int
	width, line, row := 0, 0, 0
	var cells []string
	haveHeader := false
	minSubmit := int64(math.MaxInt64)
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		var err error
		if cells, err = splitCSV(text, cells[:0]); err != nil {
			if !haveHeader {
				return nil, fmt.Errorf("%w: line %d: header: %v", ErrFormat, line, err)
			}
			t.Records++
			if err := c.bad(&LineError{Line: line, Reason: err.Error()}); err != nil {
				return nil, err
			}
			continue
		}
		if !haveHeader {
			if idx, err = csvHeader(cells, line); err != nil {
				return nil, err
			}
			width, haveHeader = len(cells), true
			continue
		}
		t.Records++
		row++
		if len(cells) != width {
			if err := c.bad(&LineError{Line: line, Reason: fmt.Sprintf("has %d fields, the header has %d", len(cells), width)}); err != nil {
				return nil, err
			}
			continue
		}
		j, skip, lerr := csvRecord(cells, &idx, line, row, names)
		switch {
		case lerr != nil:
			if err := c.bad(lerr); err != nil {
				return nil, err
			}
		case skip != keep:
			t.Skipped.add(skip)
		default:
			minSubmit = min(minSubmit, j.Submit)
			t.Jobs = append(t.Jobs, j)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("trace: reading GPU CSV after line %d: %w", line, err)
	}
	if !haveHeader {
		return nil, fmt.Errorf("%w: no header line naming the columns", ErrFormat)
	}
	if len(t.Jobs) > 0 {
		t.Header.UnixStartTime = minSubmit
		for i := range t.Jobs {
			t.Jobs[i].Submit -= minSubmit
		}
	}
	sortJobs(t.Jobs)
	return t, nil
}

// csvHeader maps column names to positions; -1 marks an absent column.
func csvHeader(cells []string, line int) ([numCols]int, error) {
	var idx [numCols]int
	for i := range idx {
		idx[i] = -1
	}
	for pos, name := range cells {
		name = strings.ToLower(strings.TrimSpace(name))
		for _, c := range csvColumns {
			for _, a := range c.aliases {
				if name == a && idx[c.col] < 0 {
					idx[c.col] = pos
				}
			}
		}
	}
	for _, need := range []csvCol{colSubmit, colRuntime, colGPUs} {
		if idx[need] < 0 {
			return idx, fmt.Errorf("%w: line %d: header %q has no %s column (accepted names: %s)",
				ErrFormat, line, strings.Join(cells, ","), csvColNames[need], strings.Join(csvColumns[need].aliases, ", "))
		}
	}
	return idx, nil
}

// csvRecord turns one row into a job; Submit is absolute (made relative later).
func csvRecord(cells []string, idx *[numCols]int, line, row int, names interner) (Job, skipKind, *LineError) {
	get := func(c csvCol) string {
		if idx[c] < 0 {
			return ""
		}
		return strings.TrimSpace(cells[idx[c]])
	}
	bad := func(c csvCol, why string) *LineError {
		return &LineError{Line: line, Field: csvColNames[c], Value: get(c), Reason: why}
	}
	j := Job{ID: int64(row), Line: line, Status: -1, RecordedWait: -1}
	if s := get(colID); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Job{}, keep, bad(colID, "must be a whole number")
		}
		j.ID = id
	}
	submit, err := parseSubmit(get(colSubmit))
	if err != nil {
		return Job{}, keep, bad(colSubmit, err.Error())
	}
	j.Submit = submit
	run, err := parseSeconds(get(colRuntime))
	if err != nil {
		return Job{}, keep, bad(colRuntime, err.Error())
	}
	j.Runtime = run
	gpus, err := parseCount(get(colGPUs), true)
	if err != nil {
		return Job{}, keep, bad(colGPUs, err.Error())
	}
	j.Procs = gpus
	if j.Nodes, err = parseCount(get(colNodes), false); err != nil {
		return Job{}, keep, bad(colNodes, err.Error())
	}
	if s := get(colRequested); s != "" {
		if j.Requested, err = parseSeconds(s); err != nil {
			return Job{}, keep, bad(colRequested, err.Error())
		}
		j.Requested = max(j.Requested, 0)
	}
	j.Account = names.get(get(colAccount))
	j.User = names.get(get(colUser))
	if j.User == "" {
		j.User = j.Account
	}
	if j.User == "" {
		j.User = "unknown"
	}
	switch {
	case j.Runtime <= 0:
		return Job{}, skipNoRuntime, nil
	case j.Procs <= 0:
		return Job{}, skipNoProcs, nil
	}
	return j, keep, nil
}

// parseSubmit reads seconds or a timestamp into Unix seconds.
func parseSubmit(s string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("is empty")
	}
	// A timestamp has ':' (or a date's second '-'); try it first, since a
	// failed number parse costs an allocation per row.
	if strings.IndexByte(s, ':') >= 0 || strings.Count(s, "-") >= 2 {
		for _, layout := range csvTimeLayouts {
			if ts, err := time.Parse(layout, s); err == nil {
				return ts.Unix(), nil
			}
		}
	}
	if x, err := parseNumber(s); err == nil {
		if x < 0 || x > 1<<40 {
			return 0, fmt.Errorf("must be seconds between 0 and 2^40")
		}
		return int64(math.Round(x)), nil
	}
	for _, layout := range csvTimeLayouts {
		if ts, err := time.Parse(layout, s); err == nil {
			return ts.Unix(), nil
		}
	}
	return 0, fmt.Errorf("is neither seconds nor a YYYY-MM-DD hh:mm:ss or RFC 3339 timestamp")
}

// parseSeconds reads a duration in seconds; -1 (unknown) reads as 0.
func parseSeconds(s string) (int64, error) {
	x, err := parseNumber(s)
	if err != nil {
		return 0, err
	}
	if x < -1 || x > 1<<40 {
		return 0, fmt.Errorf("must be seconds between -1 (unknown) and 2^40")
	}
	return max(int64(math.Round(x)), 0), nil
}

// parseCount reads a whole count; empty is 0 unless required.
func parseCount(s string, required bool) (int, error) {
	if s == "" && !required {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		x, ferr := parseNumber(s)
		if ferr != nil || x != math.Trunc(x) || math.Abs(x) > math.MaxInt32 {
			return 0, fmt.Errorf("must be a whole number")
		}
		n = int64(x)
	}
	if n < -1 {
		return 0, fmt.Errorf("must be -1 (unknown) or more")
	}
	return max(int(n), 0), nil
}

// splitCSV splits one line into cells (RFC 4180 quoting within the line).
func splitCSV(s string, out []string) ([]string, error) {
	for {
		if len(s) > 0 && s[0] == '"' {
			var b strings.Builder
			i := 1
			for {
				k := strings.IndexByte(s[i:], '"')
				if k < 0 {
					return out, fmt.Errorf("unterminated quoted field")
				}
				b.WriteString(s[i : i+k])
				i += k + 1
				if i < len(s) && s[i] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			out = append(out, b.String())
			if i == len(s) {
				return out, nil
			}
			if s[i] != ',' {
				return out, fmt.Errorf("text after a closing quote")
			}
			s = s[i+1:]
			continue
		}
		k := strings.IndexByte(s, ',')
		if k < 0 {
			if strings.IndexByte(s, '"') >= 0 {
				return out, fmt.Errorf("quote inside an unquoted field")
			}
			return append(out, s), nil
		}
		if strings.IndexByte(s[:k], '"') >= 0 {
			return out, fmt.Errorf("quote inside an unquoted field")
		}
		out = append(out, s[:k])
		s = s[k+1:]
	}
}
