package compat

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Mismatch is one field one case's two answers differ on.
type Mismatch struct {
	Case, Field   string
	Slurm, Parity string
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s %s: slurm %q, parity %q", m.Case, m.Field, m.Slurm, m.Parity)
}

// Table counts, per field, the cases both sides print it for and agree.
type Table struct {
	// Cases and Agree count accept/reject; Same and Seen count a field.
	Cases, Agree int
	Same, Seen   map[string]int
	Mismatches   []Mismatch
}

// NewTable is an empty table.
func NewTable() *Table { return &Table{Same: map[string]int{}, Seen: map[string]int{}} }

// acceptField names the accept/reject comparison in mismatches.
const acceptField = "accept/reject"

// Add compares one case's answers.
func (t *Table) Add(id string, slurm, parity *Answer) {
	t.Cases++
	if slurm.Accepted != parity.Accepted {
		t.Mismatches = append(t.Mismatches, Mismatch{id, acceptField, verdict(slurm), verdict(parity)})
		return
	}
	t.Agree++
	if !slurm.Accepted {
		return
	}
	t.fields(id, slurm.fields(), parity.fields())
}

func verdict(a *Answer) string {
	if a.Accepted {
		return "accepted"
	}
	return "refused: " + a.Error
}

// fields compares every field either side prints: one the other lacks
// is a mismatch.
func (t *Table) fields(id string, s, p map[string]string) {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	for k := range p {
		if _, ok := s[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		sv, sok := s[k]
		pv, pok := p[k]
		if !sok {
			sv = "(absent)"
		}
		if !pok {
			pv = "(absent)"
		}
		t.field(id, k, sv, pv)
	}
}

func (t *Table) field(id, k, sv, pv string) {
	t.Seen[k]++
	if sv == pv {
		t.Same[k]++
		return
	}
	t.Mismatches = append(t.Mismatches, Mismatch{id, k, sv, pv})
}

// Identical is the share of cases both sides answer identically on every
// field (and accept/reject).
func (t *Table) Identical() (same, of int) {
	bad := map[string]bool{}
	for _, m := range t.Mismatches {
		bad[m.Case] = true
	}
	return t.Cases - len(bad), t.Cases
}

// Write prints the agreement table: accept/reject, then each field with
// its agreement, worst first, then cases identical on every field.
func (t *Table) Write(w io.Writer) {
	pct := func(a, b int) float64 {
		if b == 0 {
			return 100
		}
		return 100 * float64(a) / float64(b)
	}
	fmt.Fprintf(w, "%-28s %7s %7s %8s\n", "FIELD", "SAME", "OF", "AGREE")
	fmt.Fprintf(w, "%-28s %7d %7d %7.2f%%\n", acceptField, t.Agree, t.Cases, pct(t.Agree, t.Cases))
	keys := make([]string, 0, len(t.Seen))
	for k := range t.Seen {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if d := pct(t.Same[a], t.Seen[a]) - pct(t.Same[b], t.Seen[b]); d != 0 {
			return map[bool]int{true: -1, false: 1}[d < 0]
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		fmt.Fprintf(w, "%-28s %7d %7d %7.2f%%\n", k, t.Same[k], t.Seen[k], pct(t.Same[k], t.Seen[k]))
	}
	same, of := t.Identical()
	fmt.Fprintf(w, "%-28s %7d %7d %7.2f%%\n", "cases identical", same, of, pct(same, of))
}
