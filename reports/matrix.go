package reports

import (
	"cmp"
	"slices"
	"strings"
)

// areaRank is the display order of the areas the suite defines; other
// areas come after them.
func areaRank(a string) int {
	switch a {
	case AreaPlacement:
		return 0
	case AreaIsolation:
		return 1
	case AreaAccounting:
		return 2
	case AreaHealth:
		return 3
	case AreaDriverContract:
		return 4
	case AreaParity:
		return 5
	}
	return 6
}

// compareResults orders results by area (known areas first), spec ID, then
// vendor in the run's vendor order (cross-vendor results last).
func compareResults(vendorRank func(string) int) func(a, b SpecResult) int {
	return func(a, b SpecResult) int {
		return cmp.Or(
			cmp.Compare(areaRank(a.Area), areaRank(b.Area)),
			strings.Compare(a.Area, b.Area),
			strings.Compare(a.ID, b.ID),
			cmp.Compare(vendorRank(a.Vendor), vendorRank(b.Vendor)),
			strings.Compare(a.Vendor, b.Vendor),
		)
	}
}

func (r *Run) vendorRank() func(string) int {
	rank := make(map[string]int, len(r.Vendors))
	for i, v := range r.Vendors {
		rank[v.Name] = i
	}
	return func(name string) int {
		if i, ok := rank[name]; ok {
			return i
		}
		return len(rank)
	}
}

// VendorNames returns the run's vendor names in column order.
func (r *Run) VendorNames() []string {
	names := make([]string, len(r.Vendors))
	for i, v := range r.Vendors {
		names[i] = v.Name
	}
	return names
}

// Totals counts results by status.
type Totals struct {
	Passed, Failed, Skipped, Errors int
}

// Total is the number of results counted.
func (t Totals) Total() int { return t.Passed + t.Failed + t.Skipped + t.Errors }

// Failing is the number of failed and errored results.
func (t Totals) Failing() int { return t.Failed + t.Errors }

func (t *Totals) add(s Status) {
	switch s {
	case StatusPassed:
		t.Passed++
	case StatusFailed:
		t.Failed++
	case StatusSkipped:
		t.Skipped++
	case StatusError:
		t.Errors++
	}
}

// Count tallies the run's results: per-vendor results and cross-vendor
// (parity) results separately.
func (r *Run) Count() (vendor, parity Totals) {
	for _, s := range r.Specs {
		if s.CrossVendor() {
			parity.add(s.Status)
		} else {
			vendor.add(s.Status)
		}
	}
	return vendor, parity
}

// matrixRow is one spec: a cell per vendor (nil where it did not run) and
// its parity result, if any.
type matrixRow struct {
	ID, Name, Area string
	Cells          []*SpecResult
	Parity         *SpecResult
}

type matrixArea struct {
	Area string
	Rows []matrixRow
}

// buildMatrix groups the run's results into rows per spec and areas, in
// display order. Cross-vendor results whose spec has no per-vendor row get
// a row of their own.
func buildMatrix(r *Run) []matrixArea {
	specs := slices.Clone(r.Specs)
	slices.SortStableFunc(specs, compareResults(r.vendorRank()))
	vendorCol := make(map[string]int, len(r.Vendors))
	for i, v := range r.Vendors {
		vendorCol[v.Name] = i
	}
	rowOf := map[string]*matrixRow{}
	var order []string
	row := func(id, name, area string) *matrixRow {
		if mr, ok := rowOf[id]; ok {
			return mr
		}
		mr := &matrixRow{ID: id, Name: name, Area: area, Cells: make([]*SpecResult, len(r.Vendors))}
		rowOf[id] = mr
		order = append(order, id)
		return mr
	}
	for i := range specs {
		if s := &specs[i]; !s.CrossVendor() {
			row(s.ID, s.Name, s.Area).Cells[vendorCol[s.Vendor]] = s
		}
	}
	for i := range specs {
		s := &specs[i]
		if !s.CrossVendor() {
			continue
		}
		if mr, ok := rowOf[strings.TrimPrefix(s.ID, "parity/")]; ok && strings.HasPrefix(s.ID, "parity/") {
			mr.Parity = s
			continue
		}
		row(s.ID, s.Name, s.Area).Parity = s
	}
	var areas []matrixArea
	for _, id := range order {
		mr := rowOf[id]
		if n := len(areas); n == 0 || areas[n-1].Area != mr.Area {
			areas = append(areas, matrixArea{Area: mr.Area})
		}
		areas[len(areas)-1].Rows = append(areas[len(areas)-1].Rows, *mr)
	}
	// Orphan cross-vendor rows were appended after the sorted per-vendor
	// rows; regroup so each area appears once.
	slices.SortStableFunc(areas, func(a, b matrixArea) int {
		return cmp.Or(cmp.Compare(areaRank(a.Area), areaRank(b.Area)), strings.Compare(a.Area, b.Area))
	})
	return mergeAreas(areas)
}

func mergeAreas(areas []matrixArea) []matrixArea {
	var out []matrixArea
	for _, a := range areas {
		if n := len(out); n > 0 && out[n-1].Area == a.Area {
			out[n-1].Rows = append(out[n-1].Rows, a.Rows...)
			continue
		}
		out = append(out, a)
	}
	return out
}
