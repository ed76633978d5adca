package reports

import "slices"

// Change is one result compared with the previous run. Before is empty when
// the spec is new; After is empty when it was removed.
type Change struct {
	Key
	Area, Name    string
	Before, After Status
	// Result is the current result, or the previous one for removed specs.
	Result SpecResult
}

// RunDiff is what changed between two runs, each list in display order.
type RunDiff struct {
	PreviousID string
	// NewFailures are failing now and were not failing before (passed,
	// skipped or absent): what the operator must look at first.
	NewFailures []Change
	// StillFailing were failing before and still are.
	StillFailing []Change
	// Fixed were failing before and pass now.
	Fixed []Change
	// Changed are every other status change (e.g. passed → skipped).
	Changed []Change
	// Added are results absent from the previous run, whatever their status.
	Added []Change
	// Removed are results the previous run had and this one lacks.
	Removed []Change
}

// Empty reports whether nothing changed.
func (d RunDiff) Empty() bool {
	return len(d.NewFailures)+len(d.StillFailing)+len(d.Fixed)+len(d.Changed)+len(d.Added)+len(d.Removed) == 0
}

// Diff compares cur with prev result by result (matched by spec ID and
// vendor).
func Diff(prev, cur *Run) RunDiff {
	d := RunDiff{PreviousID: prev.ID}
	before := make(map[Key]SpecResult, len(prev.Specs))
	for _, s := range prev.Specs {
		before[s.Key()] = s
	}
	specs := slices.Clone(cur.Specs)
	slices.SortStableFunc(specs, compareResults(cur.vendorRank()))
	now := make(map[Key]bool, len(specs))
	for _, s := range specs {
		now[s.Key()] = true
		p, had := before[s.Key()]
		c := Change{Key: s.Key(), Area: s.Area, Name: s.Name, After: s.Status, Result: s}
		if had {
			c.Before = p.Status
		} else {
			d.Added = append(d.Added, c)
		}
		switch {
		case s.Status.Failing() && c.Before.Failing():
			d.StillFailing = append(d.StillFailing, c)
		case s.Status.Failing():
			d.NewFailures = append(d.NewFailures, c)
		case c.Before.Failing() && s.Status == StatusPassed:
			d.Fixed = append(d.Fixed, c)
		case had && c.Before != s.Status:
			d.Changed = append(d.Changed, c)
		}
	}
	gone := slices.Clone(prev.Specs)
	slices.SortStableFunc(gone, compareResults(prev.vendorRank()))
	for _, s := range gone {
		if !now[s.Key()] {
			d.Removed = append(d.Removed, Change{Key: s.Key(), Area: s.Area, Name: s.Name, Before: s.Status, Result: s})
		}
	}
	return d
}
