package accounting

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrBadReport is wrapped by sreport option errors.
var ErrBadReport = errors.New("accounting: invalid report option")

// ReportUnit is how sreport prints usage (-t).
type ReportUnit int

// Units: TRES-minutes is sreport's default.
const (
	UnitMinutes ReportUnit = iota
	UnitHours
	UnitSeconds
	UnitPercent
)

// ParseReportUnit reads -t: minutes, hours, seconds or percent (any
// case, Slurm's capitalised forms included).
func ParseReportUnit(s string) (ReportUnit, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "minutes", "minute", "min", "mins":
		return UnitMinutes, nil
	case "hours", "hour", "h":
		return UnitHours, nil
	case "seconds", "second", "sec", "secs", "s":
		return UnitSeconds, nil
	case "percent", "%":
		return UnitPercent, nil
	}
	return 0, fmt.Errorf("%w: -t %q (want minutes, hours, seconds or percent)", ErrBadReport, s)
}

func (u ReportUnit) String() string {
	return [...]string{"Minutes", "Hours", "Seconds", "Percentage of Total"}[u]
}

// Utilization sums TRES-seconds allocated inside [from, to) per TRES name.
func Utilization(spans []Span, from, to time.Time) TRES {
	out := TRES{}
	for i := range spans {
		s := &spans[i]
		a, b, ok := s.clip(from, to)
		if !ok {
			continue
		}
		sec := b.Sub(a).Seconds()
		for n, v := range s.AllocTRES {
			out[n] += v * sec
		}
		if _, ok := s.AllocTRES[TRESBilling]; !ok {
			out[TRESBilling] += s.Billing() * sec
		}
		if _, ok := s.AllocTRES[TRESGPU]; !ok && s.AllocTRES.GPUs() > 0 {
			out[TRESGPU] += s.AllocTRES.GPUs() * sec
		}
	}
	return out
}

// GroupBy chooses what a top-usage report ranks.
type GroupBy int

// Users (sreport user TopUsage) or accounts.
const (
	ByUser GroupBy = iota
	ByAccount
)

// UsageRow is one ranked user or account: TRES-seconds used in the window,
// and (for users) the accounts they used them under.
type UsageRow struct {
	Name     string
	Accounts []string
	Used     TRES
}

// TopUsage ranks users or accounts by TRES-seconds of sortBy (gres/gpu for
// GPU-hours, billing…) inside [from, to), ties by name; n ≤ 0 keeps all.
func TopUsage(spans []Span, from, to time.Time, by GroupBy, sortBy string, n int) []UsageRow {
	rows := map[string]*UsageRow{}
	accts := map[string]map[string]bool{}
	for i := range spans {
		s := &spans[i]
		a, b, ok := s.clip(from, to)
		if !ok {
			continue
		}
		name := s.User
		if by == ByAccount {
			name = s.Account
		}
		r := rows[name]
		if r == nil {
			r = &UsageRow{Name: name, Used: TRES{}}
			rows[name], accts[name] = r, map[string]bool{}
		}
		accts[name][s.Account] = true
		for k, v := range Utilization([]Span{*s}, a, b) {
			r.Used[k] += v
		}
	}
	out := make([]UsageRow, 0, len(rows))
	for name, r := range rows {
		if by == ByUser {
			for a := range accts[name] {
				r.Accounts = append(r.Accounts, a)
			}
			sort.Strings(r.Accounts)
		}
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := out[i].Used[sortBy], out[j].Used[sortBy]; a != b {
			return a > b
		}
		return out[i].Name < out[j].Name
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// ReportOptions shapes sreport output.
type ReportOptions struct {
	From, To time.Time
	Loc      *time.Location
	Unit     ReportUnit
	TRES     []string // columns/rows to report, e.g. gres/gpu, billing
	// Capacity is the cluster's TRES (per instant); with it utilisation
	// shows Idle and Reported, and percentages are of Reported. Without it
	// percentages are of the total allocated.
	Capacity TRES
	CSV      bool
}

func (o ReportOptions) window() float64 { return o.To.Sub(o.From).Seconds() }

// scale converts TRES-seconds into the unit; of is the 100% figure.
func (o ReportOptions) scale(v, of float64) string {
	switch o.Unit {
	case UnitHours:
		return strconv.FormatFloat(v/3600, 'f', 2, 64)
	case UnitSeconds:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case UnitPercent:
		if of <= 0 {
			return "0.00%"
		}
		return strconv.FormatFloat(100*v/of, 'f', 2, 64) + "%"
	}
	return strconv.FormatFloat(v/60, 'f', 0, 64)
}

func (o ReportOptions) banner(w io.Writer, title string) error {
	if o.CSV {
		return nil
	}
	rule := strings.Repeat("-", 80)
	loc := o.Loc
	if loc == nil {
		loc = time.UTC
	}
	_, err := fmt.Fprintf(w, "%s\n%s %s - %s (%d secs)\nUsage reported in TRES %s\n%s\n", rule, title,
		o.From.In(loc).Format(timeLayout), o.To.Add(-time.Second).In(loc).Format(timeLayout),
		int64(o.window()), o.Unit, rule)
	return err
}

// writeRows prints a header and rows as an aligned table or CSV.
func (o ReportOptions) writeRows(w io.Writer, header []string, rows [][]string) error {
	if o.CSV {
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		if err := cw.WriteAll(rows); err != nil {
			return fmt.Errorf("accounting: write CSV: %w", err)
		}
		return nil
	}
	widths := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, r := range append([][]string{header}, rows...) {
		cells := make([]string, len(r))
		for i, c := range r {
			if i == 0 {
				cells[i] = Cell(c, -widths[i])
			} else {
				cells[i] = Cell(c, widths[i])
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(strings.Join(cells, "  "), " ")); err != nil {
			return err
		}
	}
	return nil
}

// RenderUtilization writes sreport cluster Utilization: one row per TRES.
func RenderUtilization(w io.Writer, alloc TRES, o ReportOptions) error {
	if err := o.banner(w, "Cluster Utilization"); err != nil {
		return err
	}
	header := []string{"TRES Name", "Allocated"}
	if o.Capacity != nil {
		header = append(header, "Idle", "Reported")
	}
	var rows [][]string
	for _, n := range o.TRES {
		reported := o.Capacity[n] * o.window()
		of := reported
		if o.Capacity == nil {
			of = alloc[n]
		}
		row := []string{n, o.scale(alloc[n], of)}
		if o.Capacity != nil {
			row = append(row, o.scale(max(reported-alloc[n], 0), of), o.scale(reported, of))
		}
		rows = append(rows, row)
	}
	return o.writeRows(w, header, rows)
}

// RenderTopUsage writes a ranked user or account table; total is the
// cluster's allocation in the window (the 100% without a capacity).
func RenderTopUsage(w io.Writer, rows []UsageRow, by GroupBy, total TRES, o ReportOptions) error {
	title, header := "Top Users", []string{"Login", "Account"}
	if by == ByAccount {
		title, header = "Top Accounts", []string{"Account"}
	}
	if err := o.banner(w, title); err != nil {
		return err
	}
	header = append(header, o.TRES...)
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		line := []string{r.Name}
		if by == ByUser {
			line = append(line, strings.Join(r.Accounts, ","))
		}
		for _, n := range o.TRES {
			of := total[n]
			if o.Capacity != nil {
				of = o.Capacity[n] * o.window()
			}
			line = append(line, o.scale(r.Used[n], of))
		}
		out = append(out, line)
	}
	return o.writeRows(w, header, out)
}
