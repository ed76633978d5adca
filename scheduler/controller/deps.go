package controller

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

// depTerm is one "type:id" condition of a --dependency spec.
type depTerm struct {
	kind string
	id   core.JobID
}

// depSpec is a parsed --dependency: all terms must hold (',') or any (?).
type depSpec struct {
	any   bool
	terms []depTerm
}

// parseDependency reads "afterok:12:13,afterany:14" or "afterok:12?afternotok:13".
// singleton and +time forms are not supported yet and are refused.
func parseDependency(s string) (depSpec, error) {
	var d depSpec
	sep := ","
	if strings.Contains(s, "?") {
		if strings.Contains(s, ",") {
			return d, fmt.Errorf("cannot mix ',' and '?'")
		}
		d.any, sep = true, "?"
	}
	for _, part := range strings.Split(s, sep) {
		fields := strings.Split(part, ":")
		kind := strings.ToLower(fields[0])
		switch kind {
		case "after", "afterany", "afterok", "afternotok":
		default:
			return d, fmt.Errorf("dependency type %q is not supported (after, afterany, afterok, afternotok)", fields[0])
		}
		if len(fields) < 2 {
			return d, fmt.Errorf("%q names no job", part)
		}
		for _, f := range fields[1:] {
			id, err := strconv.ParseUint(f, 10, 64)
			if err != nil || id == 0 {
				return d, fmt.Errorf("%q is not a job id", f)
			}
			d.terms = append(d.terms, depTerm{kind: kind, id: core.JobID(id)})
		}
	}
	return d, nil
}

// termState says whether one condition holds now, can never hold, or waits.
func (c *Controller) termState(t depTerm) core.DependencyState {
	j := c.st.jobs[t.id]
	if j == nil {
		// Purged: it finished long ago; only its outcome is unknown.
		if t.kind == "after" || t.kind == "afterany" {
			return core.DependencyNone
		}
		return core.DependencyNever
	}
	switch t.kind {
	case "after":
		if j.state != StatePending {
			return core.DependencyNone
		}
	case "afterany":
		if finished(j.state) {
			return core.DependencyNone
		}
	case "afterok":
		if j.state == StateCompleted {
			return core.DependencyNone
		}
		if finished(j.state) {
			return core.DependencyNever
		}
	case "afternotok":
		if finished(j.state) && j.state != StateCompleted {
			return core.DependencyNone
		}
		if j.state == StateCompleted {
			return core.DependencyNever
		}
	}
	return core.DependencyWaiting
}

// resolveDependenciesLocked sets every pending job's dependency state and,
// when it is met, its eligibility time (age counts from then).
func (c *Controller) resolveDependenciesLocked(now time.Time) {
	for _, j := range c.st.active {
		if j.state != StatePending || j.spec.GetDependency() == "" {
			continue
		}
		d, err := parseDependency(j.spec.GetDependency())
		if err != nil {
			j.core.Dependency = core.DependencyNever
			continue
		}
		state := core.DependencyNone
		if d.any {
			state = core.DependencyNever
		}
		for _, t := range d.terms {
			ts := c.termState(t)
			if d.any {
				if ts == core.DependencyNone {
					state = core.DependencyNone
					break
				}
				if ts == core.DependencyWaiting {
					state = core.DependencyWaiting
				}
				continue
			}
			if ts == core.DependencyNever {
				state = core.DependencyNever
				break
			}
			if ts == core.DependencyWaiting {
				state = core.DependencyWaiting
			}
		}
		if state == core.DependencyNone && j.core.Dependency != core.DependencyNone && j.core.Eligible.IsZero() {
			j.core.Eligible = now
		}
		j.core.Dependency = state
	}
}
