package jobspec

import (
	"strconv"
	"strings"
	"time"
)

// DepType is a dependency condition type.
type DepType string

// Dependency types (sbatch --dependency).
const (
	DepAfter            DepType = "after"            // target started (or was cancelled), plus Delay
	DepAfterAny         DepType = "afterany"         // target ended in any state
	DepAfterOK          DepType = "afterok"          // target ended with exit code 0
	DepAfterNotOK       DepType = "afternotok"       // target ended in a failed state
	DepAfterCorr        DepType = "aftercorr"        // array task i waits for task i of the target
	DepAfterBurstBuffer DepType = "afterburstbuffer" // target's burst buffer stage-out done (accepted, treated as afterany)
	DepSingleton        DepType = "singleton"        // no other running job with this name and user
)

var depTypes = [...]DepType{DepAfter, DepAfterAny, DepAfterOK, DepAfterNotOK, DepAfterCorr, DepAfterBurstBuffer, DepSingleton}

// maxJobID bounds job ids (Slurm's are 32-bit).
const maxJobID = 1<<32 - 1

// NoTask marks a condition on a whole job (or whole array) rather than one
// array task.
const NoTask = -1

// DepCondition is one condition: Type on JobID (0 for singleton), on one
// array task when Task >= 0, with Delay after the target started (after only).
type DepCondition struct {
	Type  DepType       `json:"type"`
	JobID uint32        `json:"jobId,omitempty"`
	Task  int           `json:"task"`
	Delay time.Duration `json:"delay,omitempty"`
}

func (c DepCondition) target() string {
	s := strconv.FormatUint(uint64(c.JobID), 10)
	if c.Task >= 0 {
		s += "_" + strconv.Itoa(c.Task)
	}
	if c.Delay > 0 {
		s += "+" + strconv.FormatInt(int64(c.Delay/time.Minute), 10)
	}
	return s
}

// Dependency is a parsed --dependency: a flat tree whose root is AND (all
// conditions, ',' separated) or OR (Any: any one condition, '?' separated)
// over single-target conditions; "afterok:1:2" is two conditions.
type Dependency struct {
	Any        bool           `json:"any,omitempty"`
	Conditions []DepCondition `json:"conditions"`
}

// ParseDependency reads a --dependency value:
// type:id[:id...][,type:id...] (all must hold) or with '?' (any one
// suffices), never both separators. Types are after, afterany, afterok,
// afternotok, aftercorr, afterburstbuffer and singleton; a bare id means
// afterany. An id is jobid or jobid_task (one array task); after also takes
// +minutes of delay.
func ParseDependency(s string) (*Dependency, error) {
	v := strings.TrimSpace(s)
	if v == "" {
		return nil, syntaxErr("dependency", s, "empty")
	}
	hasAll, hasAny := strings.Contains(v, ","), strings.Contains(v, "?")
	if hasAll && hasAny {
		return nil, syntaxErr("dependency", s, "',' (all) and '?' (any) cannot be mixed")
	}
	sep := ","
	if hasAny {
		sep = "?"
	}
	d := &Dependency{Any: hasAny}
	for _, term := range strings.Split(v, sep) {
		conds, err := parseDepTerm(term)
		if err != nil {
			return nil, syntaxErr("dependency", s, "%q: %v", term, err)
		}
		d.Conditions = append(d.Conditions, conds...)
	}
	if len(d.Conditions) == 1 {
		d.Any = false
	}
	return d, nil
}

func parseDepTerm(term string) ([]DepCondition, error) {
	fields := strings.Split(term, ":")
	typ := DepAfterAny
	ids := fields
	if known, ok := depType(fields[0]); ok {
		typ, ids = known, fields[1:]
	} else if len(fields) > 1 || leadingDigits(fields[0]) == "" {
		return nil, reason("unknown dependency type " + strconv.Quote(fields[0]))
	}
	if typ == DepSingleton {
		if len(ids) > 0 {
			return nil, reason("singleton takes no job ids")
		}
		return []DepCondition{{Type: DepSingleton, Task: NoTask}}, nil
	}
	if len(ids) == 0 {
		return nil, reason(string(typ) + " needs at least one job id")
	}
	out := make([]DepCondition, 0, len(ids))
	for _, id := range ids {
		c, err := parseDepTarget(typ, id)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func depType(s string) (DepType, bool) {
	for _, t := range depTypes {
		if strings.EqualFold(s, string(t)) {
			return t, true
		}
	}
	return "", false
}

func parseDepTarget(typ DepType, id string) (DepCondition, error) {
	c := DepCondition{Type: typ, Task: NoTask}
	if job, delay, ok := strings.Cut(id, "+"); ok {
		if typ != DepAfter {
			return c, reason("a +time delay is only allowed with after")
		}
		mins, err := parseCount(delay)
		if err != nil {
			return c, reason("delay " + strconv.Quote(delay) + " is not a number of minutes")
		}
		c.Delay, id = time.Duration(mins)*time.Minute, job
	}
	job, task, hasTask := strings.Cut(id, "_")
	if job == "" || len(job) > 10 || leadingDigits(job) != job {
		return c, reason("job id " + strconv.Quote(id) + " is not a number")
	}
	n, _ := strconv.ParseUint(job, 10, 64)
	if n == 0 || n > maxJobID {
		return c, reason("job id " + job + " is out of range")
	}
	c.JobID = uint32(n)
	if hasTask {
		t, err := parseCount(task)
		if err != nil || t >= MaxArraySizeCeiling {
			return c, reason("array task " + strconv.Quote(task) + " is not a valid index")
		}
		c.Task = t
	}
	return c, nil
}

// String renders the canonical form, which ParseDependency reads back to an
// equal Dependency. With AND, consecutive conditions of one type share a
// term ("afterok:1:2,afterany:3"); with OR every condition is its own term.
func (d *Dependency) String() string {
	var b strings.Builder
	sep := ","
	if d.Any {
		sep = "?"
	}
	for i, c := range d.Conditions {
		sameTerm := i > 0 && !d.Any && c.Type != DepSingleton && d.Conditions[i-1].Type == c.Type
		switch {
		case sameTerm:
			b.WriteString(":" + c.target())
			continue
		case i > 0:
			b.WriteString(sep)
		}
		b.WriteString(string(c.Type))
		if c.Type != DepSingleton {
			b.WriteString(":" + c.target())
		}
	}
	return b.String()
}
