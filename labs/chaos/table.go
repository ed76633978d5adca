package chaos

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Verdict is what a scenario's figures say. Verdicts are ordered: a row
// keeps the worst one any of its checks gave.
type Verdict int

// Verdicts.
const (
	// Pass: every invariant held and every figure is within its target.
	Pass Verdict = iota
	// Skip: the scenario could not apply here (not root, no tmpfs); the
	// note says why.
	Skip
	// Warn: a figure is past its target (a lag, a timeout, a wrong final
	// state the issue tracks); reported, but not a hard invariant.
	Warn
	// Fail: a hard invariant broke (a lost or reused id, a GPU held twice,
	// a wrong authorisation decision, a crash, memory over its ceiling),
	// or the scenario could not run at all.
	Fail
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "ok"
	case Skip:
		return "skipped"
	case Warn:
		return "WARN"
	case Fail:
		return "FAIL"
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}

// Figure is one measured quantity of a row, already formatted.
type Figure struct {
	Name, Value string
}

// Row is one scenario's line of the table.
type Row struct {
	Scenario string
	// Cases is how many trials or cases the figures cover.
	Cases   int
	Figures []Figure
	Verdict Verdict
	// Notes say why the verdict is not ok: each mismatch, each broken
	// invariant, what could not run.
	Notes   []string
	Elapsed time.Duration
}

// add appends a figure.
func (r *Row) add(name string, value any) {
	r.Figures = append(r.Figures, Figure{Name: name, Value: fmt.Sprint(value)})
}

// judge lowers the row's verdict to v (never raises it) with a note.
func (r *Row) judge(v Verdict, format string, args ...any) {
	r.Verdict = max(r.Verdict, v)
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// fail records a broken hard invariant.
func (r *Row) fail(format string, args ...any) { r.judge(Fail, format, args...) }

// warn records a figure past its target.
func (r *Row) warn(format string, args ...any) { r.judge(Warn, format, args...) }

// Table is a run's rows, in the order the scenarios ran.
type Table struct {
	Rows    []Row
	Started time.Time
	Elapsed time.Duration
}

// Worst is the worst verdict of the rows (Pass for none).
func (t *Table) Worst() Verdict {
	w := Pass
	for _, r := range t.Rows {
		w = max(w, r.Verdict)
	}
	return w
}

// Failed reports whether any row broke a hard invariant (or did not run).
func (t *Table) Failed() bool { return t.Worst() == Fail }

// maxNotes is how many notes a row prints; the rest are counted.
const maxNotes = 12

// Write prints the table as aligned text, then each row's notes.
func (t *Table) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tCASES\tFIGURES\tTIME\tVERDICT")
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Scenario, count(r.Cases), r.figures(), secs(r.Elapsed), r.Verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return t.writeNotes(w, "  ")
}

// WriteMarkdown prints the table as a Markdown table (for the README),
// then the notes as a list.
func (t *Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| scenario | cases | figures | time | verdict |\n|---|---:|---|---:|---|\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCell(r.Scenario), count(r.Cases), mdCell(r.figures()), secs(r.Elapsed), r.Verdict)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return t.writeNotes(w, "- ")
}

// mdCell escapes what would end a Markdown table cell.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func (t *Table) writeNotes(w io.Writer, bullet string) error {
	var b strings.Builder
	for _, r := range t.Rows {
		for i, n := range r.Notes {
			if i == maxNotes {
				fmt.Fprintf(&b, "%s%s: … and %d more\n", bullet, r.Scenario, len(r.Notes)-maxNotes)
				break
			}
			fmt.Fprintf(&b, "%s%s: %s\n", bullet, r.Scenario, n)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(w, "\n"+b.String())
	return err
}

// figures joins a row's figures as "name value · name value".
func (r *Row) figures() string {
	parts := make([]string, len(r.Figures))
	for i, f := range r.Figures {
		parts[i] = f.Name + " " + f.Value
	}
	return strings.Join(parts, " · ")
}

// count formats n with thousands separators (1,077).
func count(n int) string { return message.NewPrinter(language.English).Sprint(n) }

// secs formats a duration as seconds with one decimal (0.3 s), or
// milliseconds under a tenth of a second.
func secs(d time.Duration) string {
	if d > 0 && d < 100*time.Millisecond {
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// mib formats bytes in MiB.
func mib(b int64) string {
	return strconv.FormatInt(b>>20, 10) + " MiB"
}
