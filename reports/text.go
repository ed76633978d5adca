package reports

import (
	"fmt"
	"io"
	"strings"
)

// ANSI colours for the terminal matrix.
const (
	ansiReset  = "\x1b[0m"
	ansiGreen  = "\x1b[32m"
	ansiRed    = "\x1b[1;31m"
	ansiYellow = "\x1b[33m"
)

// WriteMatrix writes the spec × vendor matrix for a terminal: one row per
// spec, a column per vendor and a parity column with PASS, FAIL, SKIP, ERR
// or "-" (did not run), per-column pass counts, totals, then every failure
// and every skip with its reason. With colour false it is plain ASCII (for
// logs and pipes).
func WriteMatrix(w io.Writer, r *Run, colour bool) error {
	if err := r.Validate(); err != nil {
		return err
	}
	areas := buildMatrix(r)
	header := append([]string{"SPEC"}, r.VendorNames()...)
	header = append(header, "PARITY")
	rows := [][]string{header}
	kinds := [][]Status{make([]Status, len(header))}
	colTotals := make([]Totals, len(header))
	for _, a := range areas {
		for _, row := range a.Rows {
			cells := []string{row.ID}
			st := []Status{""}
			for i, c := range append(row.Cells, row.Parity) {
				if c == nil {
					cells, st = append(cells, "-"), append(st, "")
					continue
				}
				cells, st = append(cells, statusWord(c.Status)), append(st, c.Status)
				colTotals[i+1].add(c.Status)
			}
			rows, kinds = append(rows, cells), append(kinds, st)
		}
	}
	passed := []string{"passed"}
	for _, t := range colTotals[1:] {
		passed = append(passed, fmt.Sprintf("%d/%d", t.Passed, t.Total()))
	}
	rows, kinds = append(rows, passed), append(kinds, make([]Status, len(header)))

	widths := make([]int, len(header))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len(c))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Parity conformance %s  target=%s", r.ID, r.Target)
	if r.Lab != "" {
		fmt.Fprintf(&b, " lab=%s", r.Lab)
	}
	b.WriteString("\n\n")
	for ri, row := range rows {
		if ri == len(rows)-1 {
			writeRule(&b, widths)
		}
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-len(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if colour && kinds[ri][i] != "" {
				c = statusColour(kinds[ri][i]) + c + ansiReset
			}
			if i == len(row)-1 {
				pad = ""
			}
			b.WriteString(c + pad)
		}
		b.WriteString("\n")
		if ri == 0 {
			writeRule(&b, widths)
		}
	}
	vt, pt := r.Count()
	fmt.Fprintf(&b, "\n%d results: %d passed, %d failed, %s, %d skipped", vt.Total(), vt.Passed, vt.Failed, plural(vt.Errors, "error", "errors"), vt.Skipped)
	if pt.Total() > 0 {
		fmt.Fprintf(&b, "; parity: %d compared, %d differ, %d not comparable", pt.Passed+pt.Failed, pt.Failed, pt.Skipped+pt.Errors)
	}
	b.WriteString("\n")
	writeList(&b, "Failures", r, func(s SpecResult) bool { return s.Status.Failing() })
	writeList(&b, "Skipped", r, func(s SpecResult) bool { return s.Status == StatusSkipped })
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("reports: write matrix: %w", err)
	}
	return nil
}

func writeRule(b *strings.Builder, widths []int) {
	n := 2 * (len(widths) - 1)
	for _, w := range widths {
		n += w
	}
	b.WriteString(strings.Repeat("-", n) + "\n")
}

func writeList(b *strings.Builder, title string, r *Run, keep func(SpecResult) bool) {
	first := true
	for _, a := range buildMatrix(r) {
		for _, row := range a.Rows {
			for _, c := range append(row.Cells, row.Parity) {
				if c == nil || !keep(*c) {
					continue
				}
				if first {
					fmt.Fprintf(b, "\n%s:\n", title)
					first = false
				}
				who := c.Vendor
				if who == "" {
					who = "all vendors"
				}
				line := fmt.Sprintf("  %-4s %s [%s]", statusWord(c.Status), c.ID, who)
				if msg := cmpOr(c.Reason, firstEvidence(*c)); msg != "" {
					line += ": " + msg
				}
				b.WriteString(line + "\n")
			}
		}
	}
}

func firstEvidence(s SpecResult) string {
	if len(s.Evidence) == 0 {
		return ""
	}
	return firstLine(s.Evidence[0].Text)
}

func statusWord(s Status) string {
	switch s {
	case StatusPassed:
		return "PASS"
	case StatusFailed:
		return "FAIL"
	case StatusSkipped:
		return "SKIP"
	case StatusError:
		return "ERR"
	}
	return "?"
}

func statusColour(s Status) string {
	switch s {
	case StatusPassed:
		return ansiGreen
	case StatusSkipped:
		return ansiYellow
	}
	return ansiRed
}
