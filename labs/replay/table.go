package replay

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints results side by side, one column per policy, after a
// header stating the trace and the lab's capacity.
func WriteTable(out io.Writer, results ...*Result) error {
	if len(results) == 0 {
		return nil
	}
	w := &errWriter{w: out}
	r0 := results[0]
	est := string(r0.Estimates)
	if r0.Published {
		est += " (the published setup: estimate max(requested, runtime), runs end at their request, jobs sized by requested processors, a pass per event)"
	} else if r0.ExtendShortEstimates {
		est += " (raised to the runtime where shorter)"
	} else if r0.Estimates == EstimatesUser {
		est += " (jobs killed at their requested time)"
	}
	fmt.Fprintf(w, "trace:     %s, %d jobs replayed of %d records (%s)\n", r0.Trace.Format, r0.Trace.Jobs, r0.Trace.Records, skippedText(r0.Trace))
	fmt.Fprintf(w, "lab:       %s (capacity %d %s)\n", r0.LabDescription, r0.Capacity, r0.Unit)
	if r0.NoRequestedTime > 0 {
		est += fmt.Sprintf("; %d jobs state no requested time, so their runtime is their estimate", r0.NoRequestedTime)
	}
	fmt.Fprintf(w, "estimates: %s\n\n", est)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, f func(*Result) string) {
		cells := []string{name}
		for _, r := range results {
			cells = append(cells, f(r))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	row("policy", func(r *Result) string { return string(r.Policy) })
	row("jobs run", func(r *Result) string { return fmt.Sprint(r.Metrics.Jobs) })
	row("killed at limit", func(r *Result) string { return fmt.Sprint(r.Metrics.Killed) })
	row("utilisation", func(r *Result) string { return fmt.Sprintf("%.3f", r.Metrics.Utilisation) })
	row("mean wait", func(r *Result) string { return seconds(r.Metrics.WaitMean) })
	row("median wait", func(r *Result) string { return seconds(r.Metrics.WaitMedian) })
	row("p95 wait", func(r *Result) string { return seconds(r.Metrics.WaitP95) })
	row("mean bounded slowdown (tau 10 s)", func(r *Result) string { return fmt.Sprintf("%.2f", r.Metrics.BoundedSlowdown) })
	row("makespan", func(r *Result) string { return seconds(float64(r.Metrics.Makespan)) })
	if r0.Metrics.GPUFragmentation != nil {
		row("fragmented GPUs (mean)", func(r *Result) string {
			return fmt.Sprintf("%.1f", r.Metrics.GPUFragmentation.MeanFragmentedGPUs)
		})
		row("fragmented share of free GPUs", func(r *Result) string {
			return fmt.Sprintf("%.1f%%", 100*r.Metrics.GPUFragmentation.ShareOfFreeWhileQueued)
		})
	}
	row("users", func(r *Result) string { return fmt.Sprint(r.Metrics.Fairness.Users) })
	row("Jain index, user mean wait", func(r *Result) string { return fmt.Sprintf("%.3f", r.Metrics.Fairness.JainWait) })
	row("Jain index, user bounded slowdown", func(r *Result) string { return fmt.Sprintf("%.3f", r.Metrics.Fairness.JainSlowdown) })
	row("worst user mean wait", func(r *Result) string {
		return fmt.Sprintf("%s %s", seconds(r.Metrics.Fairness.WorstUserMeanWait), r.Metrics.Fairness.WorstUser)
	})
	row("scheduling passes", func(r *Result) string { return fmt.Sprint(r.Passes) })
	if err := tw.Flush(); err != nil {
		return err
	}
	writeProblems(w, r0)
	return w.err
}

// errWriter keeps the first write error so the printing code stays flat.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// writeProblems lists what the replay left out, with line numbers.
func writeProblems(w io.Writer, r *Result) {
	list := func(title string, items []Rejected) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%d %s:\n", len(items), title)
		for i, x := range items {
			if i == 10 {
				fmt.Fprintf(w, "  … and %d more (all in the JSON output)\n", len(items)-10)
				break
			}
			fmt.Fprintf(w, "  job %d (line %d): %s\n", x.ID, x.Line, x.Reason)
		}
	}
	list("jobs larger than the lab, left out", r.Rejected)
	list("jobs the scheduler could never start", r.Unscheduled)
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

func skippedText(t TraceInfo) string {
	s := t.Skipped
	parts := []string{}
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.Partial, "partial checkpoint lines")
	add(s.Cancelled, "cancelled before start")
	add(s.NoRuntime, "without runtime")
	add(s.NoProcs, "without processors")
	add(t.BadLines, "corrupt lines")
	if len(parts) == 0 {
		return "none skipped"
	}
	return "skipped: " + strings.Join(parts, ", ")
}

// seconds prints a duration in seconds with a readable form beside it.
func seconds(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.0f s", s)
	case d < time.Hour:
		return fmt.Sprintf("%.0f s (%dm%02ds)", s, d/time.Minute, d%time.Minute/time.Second)
	case d < 24*time.Hour:
		return fmt.Sprintf("%.0f s (%dh%02dm)", s, d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%.0f s (%dd%02dh)", s, d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}
