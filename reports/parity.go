package reports

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// GPUPlaceholder replaces GPU type names in normalised observations.
const GPUPlaceholder = "<gpu>"

// absent marks an observation one vendor made and another did not.
const absent = "<absent>"

// Normaliser maps one observed value to the form compared across vendors.
// It must be pure: the same input gives the same output.
type Normaliser func(vendor, key, value string) string

// GPUTypeNormaliser returns a Normaliser that replaces each of names (GPU
// type names such as "h100" or "mi300x") with "<gpu>" wherever it appears
// as a whole word, ignoring case. Empty names are ignored.
func GPUTypeNormaliser(names ...string) Normaliser {
	var ns []string
	for _, n := range names {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" && !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	// Longest first, so "h100-80gb" wins over "h100".
	slices.SortFunc(ns, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b)) })
	return func(_, _, value string) string {
		for _, n := range ns {
			value = replaceWord(value, n, GPUPlaceholder)
		}
		return value
	}
}

// replaceWord replaces case-insensitive occurrences of lower-case word in
// s that are not part of a longer alphanumeric run.
func replaceWord(s, word, with string) string {
	lower := strings.ToLower(s)
	if len(lower) != len(s) { // case folding changed byte lengths; stay exact
		lower = s
	}
	var b strings.Builder
	last := 0
	for i := 0; i+len(word) <= len(lower); {
		j := strings.Index(lower[i:], word)
		if j < 0 {
			break
		}
		start, end := i+j, i+j+len(word)
		if (start == 0 || !isAlnum(lower[start-1])) && (end == len(lower) || !isAlnum(lower[end])) {
			b.WriteString(s[last:start])
			b.WriteString(with)
			last = end
		}
		i = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// DefaultNormaliser replaces the GPU models the run's vendors and series
// report with "<gpu>": the type name is the one difference between vendors
// that parity expects.
func DefaultNormaliser(r *Run) Normaliser {
	var names []string
	for _, v := range r.Vendors {
		names = append(names, v.Model)
	}
	for _, s := range r.Series {
		names = append(names, s.Model)
	}
	return GPUTypeNormaliser(names...)
}

// CompareVendors builds one cross-vendor parity result per spec of the run
// (cross-vendor results already in the run are ignored): passed when every
// vendor that ran it reached the same status with the same normalised
// observations, failed naming both sides of each difference otherwise, and
// skipped with the reason when fewer than two vendors produced a verdict.
// A nil norm means DefaultNormaliser(r). Append the results to r.Specs to
// report them.
func CompareVendors(r *Run, norm Normaliser) []SpecResult {
	if norm == nil {
		norm = DefaultNormaliser(r)
	}
	byID := map[string][]SpecResult{}
	var ids []string
	for _, s := range r.Specs {
		if s.CrossVendor() {
			continue
		}
		if _, ok := byID[s.ID]; !ok {
			ids = append(ids, s.ID)
		}
		byID[s.ID] = append(byID[s.ID], s)
	}
	rank := r.vendorRank()
	out := make([]SpecResult, 0, len(ids))
	for _, id := range ids {
		group := byID[id]
		slices.SortStableFunc(group, func(a, b SpecResult) int { return cmp.Compare(rank(a.Vendor), rank(b.Vendor)) })
		out = append(out, compareSpec(group, norm))
	}
	slices.SortStableFunc(out, compareResults(rank))
	return out
}

func compareSpec(group []SpecResult, norm Normaliser) SpecResult {
	first := group[0]
	res := SpecResult{ID: ParityID(first.ID), Area: AreaParity, Name: "parity: " + first.Name, Status: StatusPassed}
	var ran, notRan []SpecResult
	for _, s := range group {
		if s.Status == StatusPassed || s.Status == StatusFailed {
			ran = append(ran, s)
		} else {
			notRan = append(notRan, s)
		}
	}
	if len(ran) < 2 {
		res.Status = StatusSkipped
		res.Reason = notComparable(group, ran, notRan)
		return res
	}
	normed := make([]map[string]string, len(ran))
	keys := []string{}
	for i, s := range ran {
		normed[i] = make(map[string]string, len(s.Observations))
		for k, v := range s.Observations {
			normed[i][k] = norm(s.Vendor, k, v)
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	if d := difference(ran, "status", func(i int) (string, string) { return string(ran[i].Status), string(ran[i].Status) }); d != nil {
		res.Evidence = append(res.Evidence, *d)
	}
	agreed := map[string]string{}
	for _, k := range keys {
		d := difference(ran, k, func(i int) (string, string) {
			raw, ok := ran[i].Observations[k]
			if !ok {
				return absent, absent
			}
			return raw, normed[i][k]
		})
		if d != nil {
			res.Evidence = append(res.Evidence, *d)
			continue
		}
		agreed[k] = normed[0][k]
	}
	if len(res.Evidence) > 0 {
		res.Status = StatusFailed
		res.Reason = fmt.Sprintf("%s differ on %s", vendorList(ran), differingKeys(res.Evidence))
	}
	if len(agreed) > 0 {
		res.Observations = agreed
	}
	return res
}

// difference returns parity evidence when the normalised values of key
// differ between vendors. Text and Data (key, then vendor → value) show
// what each vendor actually saw, before normalisation.
func difference(ran []SpecResult, key string, value func(i int) (raw, normed string)) *Evidence {
	_, want := value(0)
	same := true
	for i := 1; i < len(ran); i++ {
		if _, n := value(i); n != want {
			same = false
			break
		}
	}
	if same {
		return nil
	}
	parts := make([]string, len(ran))
	data := map[string]string{"key": key}
	for i, s := range ran {
		raw, _ := value(i)
		parts[i] = fmt.Sprintf("%s: %s=%s", s.Vendor, key, raw)
		data[s.Vendor] = raw
	}
	return &Evidence{Kind: "parity", Text: strings.Join(parts, " ; "), Data: data}
}

func differingKeys(ev []Evidence) string {
	keys := make([]string, len(ev))
	for i, e := range ev {
		keys[i] = e.Data["key"]
	}
	return strings.Join(keys, ", ")
}

func vendorList(rs []SpecResult) string {
	names := make([]string, len(rs))
	for i, s := range rs {
		names[i] = s.Vendor
	}
	if len(names) == 2 {
		return names[0] + " and " + names[1]
	}
	return strings.Join(names, ", ")
}

func notComparable(group, ran, notRan []SpecResult) string {
	var why []string
	for _, s := range notRan {
		w := s.Vendor + " " + string(s.Status)
		if s.Reason != "" {
			w += " (" + s.Reason + ")"
		}
		why = append(why, w)
	}
	switch {
	case len(group) == 1:
		return "ran for " + group[0].Vendor + " only; parity needs two vendors"
	case len(ran) == 1:
		return "only " + ran[0].Vendor + " reached a verdict: " + strings.Join(why, "; ")
	default:
		return "no vendor reached a verdict: " + strings.Join(why, "; ")
	}
}
