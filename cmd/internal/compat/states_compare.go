package compat

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// AddState compares one state's outputs, invocation by invocation, row
// by row, column by column: a field is "<invocation> <column header>",
// a case "<state>:<row>". Exit status and row count are fields too.
func (t *Table) AddState(slurm, parity StateRecord) {
	cases := map[string]bool{}
	byLabel := map[string]Output{}
	for _, o := range parity.Outputs {
		byLabel[o.Label] = o
	}
	for _, so := range slurm.Outputs {
		po, ok := byLabel[so.Label]
		if !ok {
			po = Output{Label: so.Label, Code: -1}
		}
		cases[slurm.State] = true
		t.field(slurm.State, so.Label+" exit", strconv.Itoa(so.Code), strconv.Itoa(po.Code))
		srows, prows := parseColumns(so, slurm), parseColumns(po, parity)
		t.field(slurm.State, so.Label+" rows", strconv.Itoa(len(srows)), strconv.Itoa(len(prows)))
		sk, pk := rowKeys(srows), rowKeys(prows)
		if jobRows(srows) && jobRows(prows) {
			// Job rows are matched by job, their order compared apart:
			// one job out of place is one difference, not a row's worth.
			t.field(slurm.State, so.Label+" order", strings.Join(sk, " "), strings.Join(pk, " "))
		}
		pi := map[string]int{}
		for i, k := range pk {
			pi[k] = i
		}
		for i, k := range sk {
			j, ok := pi[k]
			if !ok {
				t.field(slurm.State+":"+k, so.Label+" row", "present", "(absent)")
				continue
			}
			cases[slurm.State+":"+k] = true
			t.fields(slurm.State+":"+k, prefixed(so.Label, srows[i]), prefixed(so.Label, prows[j]))
		}
	}
	t.Cases += len(cases)
	t.Agree += len(cases)
}

// jobRows says the rows are jobs, keyed by their first column (JOBID,
// sacct's JobID).
func jobRows(rows []map[string]string) bool {
	return len(rows) > 0 && strings.HasPrefix(strings.ToUpper(rows[0]["header"]), "JOBID")
}

// rowKeys names each row: the header "1", a job row by its job id, any
// other by its place.
func rowKeys(rows []map[string]string) []string {
	out := make([]string, len(rows))
	job := jobRows(rows)
	for i, r := range rows {
		out[i] = strconv.Itoa(i + 1)
		if job && i > 0 {
			if id := cmp.Or(r["JOBID"], r["JobID"]); id != "" {
				out[i] = id
			} else if l, ok := r["line"]; ok {
				out[i], _, _ = strings.Cut(l, " ")
			}
		}
	}
	return out
}

func prefixed(label string, row map[string]string) map[string]string {
	out := make(map[string]string, len(row))
	for k, v := range row {
		out[label+" "+k] = v
	}
	return out
}

// dateLine is the time -l prints above the header.
var dateLine = regexp.MustCompile(`^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$`)

// parseColumns splits an output under its header: on '|' where the
// invocation gave a format, else on blanks (only the last column's
// values have any). A row that does not split into the header's columns is kept
// whole, as "line". Repeated headers get #2, #3.
func parseColumns(o Output, r StateRecord) []map[string]string {
	// The last column (NODELIST(REASON), REASON) may hold blanks.
	sep := func(s string) []string { return strings.Fields(s) }
	last := func(vals []string, n int) []string {
		if n > 0 && len(vals) > n {
			vals = append(vals[:n-1], strings.Join(vals[n-1:], " "))
		}
		return vals
	}
	if splitsOnBars(o.Argv) {
		sep = func(s string) []string {
			parts := strings.Split(s, "|")
			for i := range parts {
				parts[i] = strings.TrimSpace(parts[i])
			}
			return parts
		}
	}
	var lines []string
	for _, l := range strings.Split(o.Stdout, "\n") {
		t := strings.TrimSpace(l)
		if rule.MatchString(t) && !splitsOnBars(o.Argv) {
			// sacct's rule gives each column's span: a value with
			// blanks (CANCELLED by 0) stays in its column.
			spans := ruleSpans(l)
			sep = func(s string) []string { return cutSpans(s, spans) }
			continue
		}
		if t != "" && !dateLine.MatchString(t) {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	var head []string
	seen := map[string]int{}
	for _, h := range sep(lines[0]) {
		seen[h]++
		if seen[h] > 1 {
			h += "#" + strconv.Itoa(seen[h])
		}
		head = append(head, h)
	}
	rows := []map[string]string{{"header": strings.Join(head, " ")}}
	for _, l := range lines[1:] {
		vals := sep(l)
		if !splitsOnBars(o.Argv) {
			vals = last(vals, len(head))
			if len(vals) == len(head)-1 {
				vals = append(vals, "") // an empty last column (sprio -l TRES)
			}
		}
		row := map[string]string{}
		if len(vals) != len(head) {
			row["line"] = normaliseCell("", strings.Join(vals, " "), r)
		} else {
			for i, h := range head {
				row[h] = normaliseCell(h, vals[i], r)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// rule is the line of dashes sacct prints under its header.
var rule = regexp.MustCompile(`^-+( +-+)*$`)

// ruleSpans are the [start, end) of each run of dashes in a rule line.
func ruleSpans(rule string) [][2]int {
	var out [][2]int
	for i := 0; i < len(rule); {
		if rule[i] != '-' {
			i++
			continue
		}
		j := i
		for j < len(rule) && rule[j] == '-' {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

// cutSpans cuts a line into the spans' columns, trimmed.
func cutSpans(line string, spans [][2]int) []string {
	out := make([]string, len(spans))
	for i, sp := range spans {
		a, b := min(sp[0], len(line)), min(sp[1], len(line))
		out[i] = strings.TrimSpace(line[a:b])
	}
	return out
}

// splitsOnBars says the invocation prints '|'-separated columns: squeue,
// sinfo and sprio given -o, sacct given -p or -P.
func splitsOnBars(argv []string) bool {
	if argv[0] == "sacct" {
		return slices.ContainsFunc(argv, func(a string) bool { return a == "-p" || a == "-P" || a == "--parsable" || a == "--parsable2" })
	}
	return slices.Contains(argv, "-o")
}

// duration is an elapsed time or time left as squeue prints it.
var duration = regexp.MustCompile(`^(\d+-)?(\d+:)?\d+:\d\d$`)

// elapsed are the columns that count the seconds since a job started:
// they differ by when each side was looked at.
var elapsed = map[string]bool{"TIME": true, "TIME_LEFT": true, "Elapsed": true}

// normaliseCell makes one value comparable: the directory becomes $CWD,
// times $TIME, elapsed times $ELAPSED and, in the job id columns, the
// ids the state's sbatch steps got $J1, $J2... in submission order.
func normaliseCell(head, v string, r StateRecord) string {
	if r.Dir != "" {
		v = strings.ReplaceAll(v, r.Dir, "$CWD")
	}
	v = stamp.ReplaceAllString(v, "$$TIME")
	if elapsed[strings.TrimSuffix(head, "#2")] && duration.MatchString(v) {
		return "$ELAPSED"
	}
	switch {
	case strings.Contains(strings.ToUpper(head), "JOBID") || strings.HasPrefix(head, "ARRAY_JOB_ID"):
		return jobID(v, r.IDs)
	case head == "" || head == "DEPENDENCY":
		for i, id := range r.IDs {
			v = replaceID(v, id, "$J"+strconv.Itoa(i+1))
		}
	}
	return v
}

// arrayTask is a job id with an array task's or tasks' or a step's after it: 12_3,
// 12_[1-3], 12.batch, 12_3.batch.
var arrayTask = regexp.MustCompile(`^(\d+)([_.]\S+)?$`)

// jobID names a job id column's value by the sbatch step that got it.
func jobID(v string, ids []string) string {
	m := arrayTask.FindStringSubmatch(v)
	if m == nil {
		return v
	}
	if i := slices.Index(ids, m[1]); i >= 0 {
		return "$J" + strconv.Itoa(i+1) + m[2]
	}
	// An id no sbatch step got: an array task's own (%A), numbered by
	// each side's counter.
	return "$TASKJOB" + m[2]
}

// WriteByCommand prints, per status command, how many of the fields it
// printed agree.
func (t *Table) WriteByCommand(w io.Writer) {
	same, seen := map[string]int{}, map[string]int{}
	for k, n := range t.Seen {
		cmd, _, _ := strings.Cut(k, " ")
		seen[cmd] += n
		same[cmd] += t.Same[k]
	}
	cmds := make([]string, 0, len(seen))
	for c := range seen {
		cmds = append(cmds, c)
	}
	slices.Sort(cmds)
	for _, c := range cmds {
		fmt.Fprintf(w, "%-8s %5d of %5d fields agree (%.1f%%)\n", c, same[c], seen[c], 100*float64(same[c])/float64(seen[c]))
	}
}
