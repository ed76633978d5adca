package compat

import (
	"regexp"
	"strings"
)

// Field is one Key=Value pair of a record, in the order printed.
type Field struct{ Key, Value string }

// ParseRecord splits one `scontrol show job -o` line into its pairs. A
// word without '=' continues the value before it (JobName=my job).
func ParseRecord(line string) []Field {
	var out []Field
	for _, w := range strings.Fields(line) {
		k, v, ok := strings.Cut(w, "=")
		if !ok || strings.ContainsAny(k, "(),") {
			if n := len(out); n > 0 {
				out[n-1].Value += " " + w
			}
			continue
		}
		out = append(out, Field{k, v})
	}
	return out
}

// skipped are fields that differ by nature between two clusters: the
// submitting session and host, when the scheduler last looked.
var skipped = map[string]bool{"AllocNode:Sid": true, "LastSchedEval": true}

var stamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`)

// ids are what a record's numbers stand for on one side: the job's own
// id and the id of the job {PREV} named.
type ids struct{ job, prev string }

// idFields are the fields that carry the job's own id (in paths too);
// elsewhere a number is a count and stays. Only Dependency names {PREV}.
var idFields = map[string]bool{"JobId": true, "ArrayJobId": true, "StdOut": true, "StdErr": true, "StdIn": true}

// normalise makes a value comparable across the two sides: the working
// directory becomes $CWD, times $TIME, job ids $ID and $PREV.
func normalise(key, v, dir string, n ids) string {
	if dir != "" {
		v = strings.ReplaceAll(v, dir, "$CWD")
	}
	v = stamp.ReplaceAllString(v, "$$TIME")
	switch {
	case idFields[key]:
		v = replaceID(v, n.job, "$ID")
	case key == "Dependency":
		v = replaceID(v, n.prev, "$PREV")
	}
	return v
}

// replaceID replaces id where it stands as a whole number in v: no digit
// after it, no letter or digit before it (n1 is a node, t1 a name).
func replaceID(v, id, with string) string {
	if id == "" {
		return v
	}
	var b strings.Builder
	for {
		i := strings.Index(v, id)
		if i < 0 {
			b.WriteString(v)
			return b.String()
		}
		end := i + len(id)
		whole := (i == 0 || !isAlnum(v[i-1])) && (end == len(v) || !isDigit(v[end]))
		b.WriteString(v[:i])
		if whole {
			b.WriteString(with)
		} else {
			b.WriteString(id)
		}
		v = v[end:]
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// NormaliseRecord is a parsed, normalised record as a map, the skipped
// fields left out.
func NormaliseRecord(line, dir string, n ids) map[string]string {
	out := map[string]string{}
	for _, f := range ParseRecord(line) {
		if skipped[f.Key] {
			continue
		}
		out[f.Key] = normalise(f.Key, f.Value, dir, n)
	}
	return out
}

// queueFormat is the squeue -o format the harness compares: most of
// squeue's codes, '|' between them.
var queueCodes = []string{"%i", "%A", "%F", "%K", "%j", "%t", "%T", "%r", "%D", "%C", "%l", "%L", "%P", "%b", "%m",
	"%c", "%d", "%q", "%a", "%E", "%f", "%h", "%I", "%J", "%k", "%n", "%o", "%p", "%Q", "%v", "%x", "%y", "%z", "%Z",
	"%S", "%e", "%M", "%u", "%g", "%w", "%B", "%N", "%R", "%O", "%s", "%H"}

func queueFormat() string { return strings.Join(queueCodes, "|") }

// NormaliseQueue splits one squeue -o line into its codes' values.
func NormaliseQueue(line, dir string, n ids) map[string]string {
	parts := strings.Split(strings.TrimRight(line, "\n"), "|")
	out := map[string]string{}
	for i, code := range queueCodes {
		v := ""
		if i < len(parts) {
			v = parts[i]
		}
		out["squeue "+code] = normaliseCode(code, v, dir, n)
	}
	return out
}

// normaliseCode is one squeue code's value made comparable; ids are
// replaced only in the codes that print them.
func normaliseCode(code, v, dir string, n ids) string {
	v = strings.TrimSpace(v)
	if dir != "" {
		v = strings.ReplaceAll(v, dir, "$CWD")
	}
	v = stamp.ReplaceAllString(v, "$$TIME")
	switch code {
	case "%i":
		// 12_[1-3]: the id before the array's tasks only.
		if rest, ok := strings.CutPrefix(v, n.job); ok && n.job != "" {
			v = "$ID" + rest
		}
	case "%A", "%F":
		v = replaceID(v, n.job, "$ID")
	case "%E":
		v = replaceID(v, n.prev, "$PREV")
	}
	return v
}

// willRunJob is the job id in a --test-only line.
var willRunJob = regexp.MustCompile(`^sbatch: Job \d+ `)

// normaliseText is the --test-only line with its job id, times and the
// directory replaced.
func normaliseText(s, dir string) string {
	s = strings.TrimSpace(s)
	if dir != "" {
		s = strings.ReplaceAll(s, dir, "$CWD")
	}
	s = stamp.ReplaceAllString(s, "$$TIME")
	return willRunJob.ReplaceAllString(s, "sbatch: Job $$ID ")
}
