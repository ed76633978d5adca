package accounting

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// TableOptions chooses between sacct's aligned table and its parsable forms.
type TableOptions struct {
	// Parsable prints fields joined by Delimiter (default "|") instead of
	// aligned columns: -P/--parsable2, or -p/--parsable with Trailing.
	Parsable  bool
	Trailing  bool
	Delimiter string
	NoHeader  bool
}

// Cell fits s into width as sacct does: padded to |width| (right aligned
// when width is positive), or cut to |width|−1 characters and a "+".
func Cell(s string, width int) string {
	abs := width
	if abs < 0 {
		abs = -abs
	}
	if n := utf8.RuneCountInString(s); n > abs {
		r := []rune(s)
		return string(r[:abs-1]) + "+"
	} else if pad := strings.Repeat(" ", abs-n); width > 0 {
		return pad + s
	} else {
		return s + pad
	}
}

// headerCell fits a column title into width as sacct does: cut short
// without the "+" a cut value gets (TimelimitRaw at 10 is "TimelimitR").
func headerCell(s string, width int) string {
	if r := []rune(s); len(r) > max(width, -width) {
		return string(r[:max(width, -width)])
	}
	return Cell(s, width)
}

// RenderTable writes recs as sacct does with the given columns.
func RenderTable(w io.Writer, recs []JobRecord, cols []Column, v View, opt TableOptions) error {
	lines := make([][]string, len(recs))
	for i := range recs {
		lines[i] = make([]string, len(cols))
		for j, c := range cols {
			lines[i][j] = c.Field.Value(&recs[i], v)
		}
	}
	return writeCells(w, cols, lines, opt)
}

// writeCells prints a header (titles and a dashed rule when aligned) and
// lines, aligned to the columns' widths or joined by the delimiter.
func writeCells(w io.Writer, cols []Column, lines [][]string, opt TableOptions) error {
	delim := opt.Delimiter
	if delim == "" {
		delim = "|"
	}
	b := bufio.NewWriter(w)
	line := func(cells []string, header bool) {
		for i, c := range cells {
			switch {
			case opt.Parsable && i > 0:
				b.WriteString(delim)
			case i > 0:
				b.WriteByte(' ')
			}
			switch {
			case opt.Parsable:
				b.WriteString(c)
			case header:
				b.WriteString(headerCell(c, cols[i].Width))
			default:
				b.WriteString(Cell(c, cols[i].Width))
			}
		}
		if opt.Parsable && opt.Trailing {
			b.WriteString(delim)
		}
		b.WriteByte('\n')
	}
	if !opt.NoHeader {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = c.Header()
		}
		line(cells, true)
		if !opt.Parsable {
			for i, c := range cols {
				cells[i] = strings.Repeat("-", max(c.Width, -c.Width))
			}
			line(cells, true)
		}
	}
	for _, l := range lines {
		line(l, false)
	}
	return b.Flush()
}

// Slurm-style optional number: {"set":…, "infinite":…, "number":…}.
type optNumber struct {
	Set      bool    `json:"set"`
	Infinite bool    `json:"infinite"`
	Number   float64 `json:"number"`
}

type jsonTRES struct {
	Type  string  `json:"type"`
	Name  string  `json:"name"`
	Count float64 `json:"count"`
}

type jsonTime struct {
	Submission int64     `json:"submission"`
	Eligible   int64     `json:"eligible"`
	Start      int64     `json:"start"`
	End        int64     `json:"end"`
	Elapsed    int64     `json:"elapsed"`
	Limit      optNumber `json:"limit"` // minutes
}

type jsonExit struct {
	Status     []string  `json:"status"`
	ReturnCode optNumber `json:"return_code"`
	Signal     optNumber `json:"signal"`
}

type jsonUsage struct {
	CPUSeconds   float64 `json:"cpu_seconds"`
	MaxRSSMiB    float64 `json:"max_rss_mib"`
	GPUUtilMean  float64 `json:"gpu_util_mean"`
	GPUUtilMax   float64 `json:"gpu_util_max"`
	GPUMemMaxMiB float64 `json:"gpu_mem_max_mib"`
}

type jsonStep struct {
	Step     struct{ ID, Name string } `json:"step"`
	State    []string                  `json:"state"`
	ExitCode jsonExit                  `json:"exit_code"`
	Time     jsonTime                  `json:"time"`
	Nodes    string                    `json:"nodes"`
	TRES     map[string][]jsonTRES     `json:"tres"`
	Usage    jsonUsage                 `json:"usage"`
}

type jsonJob struct {
	JobID         uint64                `json:"job_id"`
	ArrayJobID    uint64                `json:"array_job_id"`
	ArrayTaskID   optNumber             `json:"array_task_id"`
	Name          string                `json:"name"`
	User          string                `json:"user"`
	Account       string                `json:"account"`
	Partition     string                `json:"partition"`
	QOS           string                `json:"qos"`
	State         []string              `json:"state"`
	CancelledBy   string                `json:"cancelled_by,omitempty"`
	ExitCode      jsonExit              `json:"exit_code"`
	Time          jsonTime              `json:"time"`
	RestartCnt    int                   `json:"restart_cnt"`
	Nodes         string                `json:"nodes"`
	NodeCount     int                   `json:"node_count"`
	TRES          map[string][]jsonTRES `json:"tres"`
	GPUUUIDs      []string              `json:"gpu_uuids"`
	Usage         jsonUsage             `json:"usage"`
	StartDecision string                `json:"start_decision,omitempty"`
	EndDecision   string                `json:"end_decision,omitempty"`
	Steps         []jsonStep            `json:"steps"`
}

func tresList(t TRES) []jsonTRES {
	out := []jsonTRES{}
	for _, n := range t.Names() {
		typ, name, _ := strings.Cut(n, "/")
		out = append(out, jsonTRES{Type: typ, Name: name, Count: t[n]})
	}
	return out
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func unix(r *JobRecord, v View) jsonTime {
	jt := jsonTime{
		Submission: unixOrZero(r.Submit), Eligible: unixOrZero(r.Eligible),
		Start: unixOrZero(r.Start), End: unixOrZero(r.End),
		Elapsed: int64(r.Elapsed(v.Now).Seconds()),
	}
	if r.Timelimit > 0 {
		jt.Limit = optNumber{Set: true, Number: r.Timelimit.Minutes()}
	} else {
		jt.Limit = optNumber{Set: true, Infinite: true}
	}
	return jt
}

func exitOf(r *JobRecord) jsonExit {
	status := "SUCCESS"
	switch {
	case r.ExitSignal != 0:
		status = "SIGNALED"
	case r.ExitCode != 0:
		status = "ERROR"
	case !r.State.Ended():
		status = "PENDING"
	}
	return jsonExit{Status: []string{status},
		ReturnCode: optNumber{Set: r.State.Ended(), Number: float64(r.ExitCode)},
		Signal:     optNumber{Set: r.ExitSignal != 0, Number: float64(r.ExitSignal)}}
}

func usageOf(r *JobRecord) jsonUsage {
	u := r.Usage
	return jsonUsage{CPUSeconds: u.CPUTime.Seconds(), MaxRSSMiB: u.MaxRSSMiB, GPUUtilMean: u.GPUUtilMean,
		GPUUtilMax: u.GPUUtilMax, GPUMemMaxMiB: u.GPUMemMaxMiB}
}

// WriteJSON writes recs as sacct --json does: {"jobs": [...], "meta",
// "errors", "warnings"}, each job with its steps nested. Formatting
// options do not apply; filters already did. Records must be sorted
// (SortRecords) so steps follow their allocation.
func WriteJSON(w io.Writer, recs []JobRecord, v View, client string) error {
	jobs := []jsonJob{}
	index := map[[2]uint64]int{}
	for i := range recs {
		r := &recs[i]
		key := [2]uint64{r.JobID, uint64(r.Run)}
		j, ok := index[key]
		if !ok {
			j = len(jobs)
			index[key] = j
			jobs = append(jobs, jobJSON(r, v))
		}
		if r.Step != "" {
			s := jsonStep{State: []string{string(r.State)}, ExitCode: exitOf(r), Time: unix(r, v), Nodes: r.NodeList,
				TRES: map[string][]jsonTRES{"requested": tresList(r.ReqTRES), "allocated": tresList(r.AllocTRES)}, Usage: usageOf(r)}
			s.Step.ID, s.Step.Name = r.IDString(), r.Step
			jobs[j].Steps = append(jobs[j].Steps, s)
		} else if ok {
			steps := jobs[j].Steps
			jobs[j] = jobJSON(r, v)
			jobs[j].Steps = steps
		}
	}
	doc := map[string]any{
		"jobs":     jobs,
		"meta":     map[string]any{"plugin": map[string]string{"name": "parity", "data_parser": "parity/v1"}, "client": map[string]string{"source": client}},
		"errors":   []any{},
		"warnings": []any{},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("accounting: write JSON: %w", err)
	}
	return nil
}

func jobJSON(r *JobRecord, v View) jsonJob {
	j := jsonJob{JobID: r.JobID, ArrayJobID: r.ArrayJobID, Name: r.Name, User: r.User, Account: r.Account,
		Partition: r.Partition, QOS: r.QOS, State: []string{string(r.State)}, CancelledBy: r.CancelledBy,
		ExitCode: exitOf(r), Time: unix(r, v), RestartCnt: r.Run, Nodes: r.NodeList, NodeCount: r.NNodes,
		TRES:     map[string][]jsonTRES{"requested": tresList(r.ReqTRES), "allocated": tresList(r.AllocTRES)},
		GPUUUIDs: append([]string{}, r.GPUUUIDs...), Usage: usageOf(r),
		StartDecision: r.StartDecision, EndDecision: r.EndDecision, Steps: []jsonStep{}}
	if r.ArrayJobID != 0 {
		j.ArrayTaskID = optNumber{Set: true, Number: float64(r.ArrayTaskID)}
	}
	return j
}
