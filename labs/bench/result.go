package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Result is one bench run.
type Result struct {
	Date       string `json:"date"`
	Lab        string `json:"lab"`
	Sizes      Sizes  `json:"sizes"`
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
	// SlurmSkipped says why the Slurm column is empty ("" when it ran).
	SlurmSkipped  string            `json:"slurm_skipped,omitempty"`
	ParityFigures map[string]Figure `json:"parity"`
	SlurmFigures  map[string]Figure `json:"slurm,omitempty"`
	Rows          []Row             `json:"rows"`
}

// Row is one line of the side-by-side table.
type Row struct {
	Workload string `json:"workload"`
	Metric   string `json:"metric"`
	Key      string `json:"key"`
	// LowerIsBetter: times; otherwise rates.
	LowerIsBetter bool   `json:"lower_is_better"`
	Parity        Figure `json:"parity"`
	Slurm         Figure `json:"slurm"`
	// SlurmRun is false when the Slurm side did not run.
	SlurmRun bool `json:"slurm_run"`
	// Ratio is how many times better Parity did (slurm/parity for times,
	// parity/slurm for rates); 0 when either figure is missing.
	Ratio float64 `json:"ratio"`
}

func table(r *Result) []Row {
	s := r.Sizes
	defs := []struct {
		workload, metric, key string
		lower                 bool
		size                  int // 0: the workload was skipped, no row
	}{
		{fmt.Sprintf("(a) %d individual submissions", s.Submits), "submit time (s)", keySubmitTime, true, s.Submits},
		{"", "submit rate (jobs/s)", keySubmitRate, false, s.Submits},
		{"", "submit → drained (s)", keySubmitDrain, true, s.Submits},
		{fmt.Sprintf("(b) %d-task 1-GPU array", s.Array), "submit → last completion (s)", keyArrayDrain, true, s.Array},
		{fmt.Sprintf("(c) %d-job mixed GPU backlog", s.Backlog), "submit, not compared (s)", keyBacklogSub, true, s.Backlog},
		{"", "drain after blocker ends (s)", keyBacklogDone, true, s.Backlog},
		{fmt.Sprintf("(d) pass time at depth %d", s.Backlog), "mean pass (ms)", keyPassMean, true, s.Backlog},
		{"", "last pass (ms)", keyPassLast, true, s.Backlog},
	}
	// The backlog goes in by each side's fastest path, which differ: its
	// submit time is shown for scale, without a ratio.
	incomparable := map[string]bool{keyBacklogSub: true}
	rows := make([]Row, 0, len(defs))
	for _, d := range defs {
		if d.size == 0 {
			continue
		}
		row := Row{Workload: d.workload, Metric: d.metric, Key: d.key, LowerIsBetter: d.lower,
			Parity: r.ParityFigures[d.key], SlurmRun: r.SlurmSkipped == ""}
		if row.SlurmRun {
			row.Slurm = r.SlurmFigures[d.key]
		}
		p, q := row.Parity, row.Slurm
		if row.SlurmRun && !incomparable[d.key] && p.Err == "" && q.Err == "" && p.Value > 0 && q.Value > 0 {
			if d.lower {
				row.Ratio = q.Value / p.Value
			} else {
				row.Ratio = p.Value / q.Value
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the side-by-side table, then the notes.
func (r *Result) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "Parity lab %s vs Slurm, %s; load before %s, after %s\n\n", r.Lab, r.Date, r.LoadBefore, r.LoadAfter)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tMETRIC\tPARITY\tSLURM\tRATIO")
	for _, row := range r.Rows {
		slurm := "not run"
		if row.SlurmRun {
			slurm = cell(row.Slurm)
		}
		ratio := "-"
		if row.Ratio > 0 {
			ratio = fmt.Sprintf("%.1fx", row.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", row.Workload, row.Metric, cell(row.Parity), slurm, ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nRatio: how many times better Parity did (Slurm/Parity for times, Parity/Slurm for rates).")
	if r.SlurmSkipped != "" {
		fmt.Fprintf(w, "Slurm: not run (%s).\n", r.SlurmSkipped)
	}
	var notes []string
	for _, side := range []struct {
		name string
		figs map[string]Figure
	}{{"parity", r.ParityFigures}, {"slurm", r.SlurmFigures}} {
		for _, row := range r.Rows {
			f := side.figs[row.Key]
			if f.Note != "" {
				notes = append(notes, fmt.Sprintf("%s %s: %s", side.name, row.Metric, f.Note))
			}
			if f.Err != "" {
				notes = append(notes, fmt.Sprintf("%s %s failed: %s", side.name, row.Metric, f.Err))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "Notes:\n  "+strings.Join(notes, "\n  "))
	}
	return nil
}

func cell(f Figure) string {
	switch {
	case f.Err != "":
		return "failed"
	case f.Value == 0:
		return "-"
	case f.Value >= 100:
		return fmt.Sprintf("%.0f", f.Value)
	case f.Value >= 10:
		return fmt.Sprintf("%.1f", f.Value)
	default:
		return fmt.Sprintf("%.2f", f.Value)
	}
}
