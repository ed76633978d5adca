package userverbs

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

type reclaimReportOptions struct {
	clientFlags
	start, end          string
	parsable2, csv, noH bool
}

// NewReportReclaimCmd is `parity report reclaim`: it asks the controller
// (ReclaimReport) rather than reading the ledger, since reclamations live
// in the decision log.
func NewReportReclaimCmd() *cobra.Command { return newReportReclaimCmdWith(realUserEnv()) }

func newReportReclaimCmdWith(env userEnv) *cobra.Command {
	var o reclaimReportOptions
	cmd := &cobra.Command{
		Use:   "reclaim [start=TIME] [end=TIME]",
		Short: "Idle-GPU reclamation per account and user: jobs reclaimed, warnings, idle and freed GPU-hours",
		Long: `Sums the controller's reclaim decisions over [start, end): per account, then
per user inside it. Idle GPU-hours are what reclaimed jobs held unused
before they were reclaimed; freed GPU-hours what their remaining time limits
would have held. Dry-run decisions are counted apart (DryRunJobs). The
default window is yesterday, as for the other reports; times are Slurm
times (2025-06-02T09:00, now-7days, today). Users see their own jobs only.`,
		Example: `  parity report reclaim -S now-7days -E now
  parity report reclaim start=2025-06-01 end=2025-07-01 --parsable2
  parity report reclaim -S 2025-06-01 --json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runReclaimReport(cmd, env, &o, args) },
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.start, "start", "S", "", "window start (default: yesterday 00:00)")
	f.StringVarP(&o.end, "end", "E", "", "window end, exclusive (default: today 00:00)")
	f.BoolVarP(&o.parsable2, "parsable2", "P", false, "'|'-separated, no trailing '|'")
	f.BoolVar(&o.csv, "csv", false, "CSV instead of a table")
	f.BoolVarP(&o.noH, "noheader", "n", false, "no header line")
	return cmd
}

func runReclaimReport(cmd *cobra.Command, env userEnv, o *reclaimReportOptions, args []string) error {
	const verb = "report reclaim"
	for _, a := range args {
		key, val, ok := strings.Cut(a, "=")
		switch {
		case ok && strings.EqualFold(key, "start"):
			o.start = val
		case ok && strings.EqualFold(key, "end"):
			o.end = val
		default:
			return usageError(verb, "unknown argument %q (want start=TIME or end=TIME)", a)
		}
	}
	if o.csv && o.parsable2 {
		return usageError(verb, "--csv and --parsable2 exclude each other")
	}
	start, end, err := reclaimWindow(env, o.start, o.end)
	if err != nil {
		return usageError(verb, "%v", err)
	}
	s, err := o.dial(cmd, verb, env)
	if err != nil {
		return err
	}
	defer s.close()
	resp, err := s.c.ReclaimReport(s.ctx, &pb.ReclaimReportRequest{Since: api.Timestamp(start), Until: api.Timestamp(end)})
	if err != nil {
		return s.fail(err)
	}
	w := cmd.OutOrStdout()
	if o.json {
		return writeMessageJSON(w, resp)
	}
	rows := reclaimRows(resp)
	switch {
	case o.csv:
		return writeReclaimCSV(w, rows, o.noH)
	case o.parsable2:
		return writeReclaimDelimited(w, rows, o.noH)
	}
	fmt.Fprintf(w, "Idle-GPU reclamation %s - %s (GPU-hours)\n", start.In(env.loc).Format("2006-01-02T15:04:05"),
		end.In(env.loc).Format("2006-01-02T15:04:05"))
	return writeReclaimTable(w, rows, o.noH)
}

// reclaimWindow reads -S/-E like the other reports: yesterday by default.
func reclaimWindow(env userEnv, startArg, endArg string) (time.Time, time.Time, error) {
	now := env.now().In(env.loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, env.loc)
	start, end := today.AddDate(0, 0, -1), today
	var err error
	if startArg != "" {
		if start, err = accounting.ParseTime(startArg, now, env.loc); err != nil {
			return start, end, fmt.Errorf("--start=%q: %w", startArg, err)
		}
	}
	if endArg != "" {
		if end, err = accounting.ParseTime(endArg, now, env.loc); err != nil {
			return start, end, fmt.Errorf("--end=%q: %w", endArg, err)
		}
	}
	if !end.After(start) {
		return start, end, fmt.Errorf("end %s is not after start %s", end.In(env.loc).Format("2006-01-02T15:04:05"),
			start.In(env.loc).Format("2006-01-02T15:04:05"))
	}
	return start, end, nil
}

var reclaimHeader = []string{"Account", "User", "Jobs", "Warnings", "IdleGPUHours", "FreedGPUHours", "DryRunJobs"}

// reclaimRows lists each account's totals (User empty) followed by its
// users, as sreport's AccountUtilizationByUser does.
func reclaimRows(resp *pb.ReclaimReportResponse) [][]string {
	row := func(r *pb.AccountReclaim) []string {
		return []string{r.GetAccount(), r.GetUser(), strconv.Itoa(int(r.GetJobs())), strconv.Itoa(int(r.GetWarnings())),
			strconv.FormatFloat(r.GetIdleGpuHours(), 'f', 2, 64), strconv.FormatFloat(r.GetFreedGpuHours(), 'f', 2, 64),
			strconv.Itoa(int(r.GetDryRunJobs()))}
	}
	var out [][]string
	users := resp.GetUsers()
	for _, a := range resp.GetAccounts() {
		out = append(out, row(a))
		for _, u := range users {
			if u.GetAccount() == a.GetAccount() {
				out = append(out, row(u))
			}
		}
	}
	return out
}

func writeReclaimTable(w io.Writer, rows [][]string, noHeader bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if !noHeader {
		fmt.Fprintln(tw, strings.Join(reclaimHeader, "\t")+"\t")
	}
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	return tw.Flush()
}

func writeReclaimDelimited(w io.Writer, rows [][]string, noHeader bool) error {
	var b strings.Builder
	if !noHeader {
		b.WriteString(strings.Join(reclaimHeader, "|") + "\n")
	}
	for _, r := range rows {
		b.WriteString(strings.Join(r, "|") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeReclaimCSV(w io.Writer, rows [][]string, noHeader bool) error {
	cw := csv.NewWriter(w)
	if !noHeader {
		if err := cw.Write(reclaimHeader); err != nil {
			return err
		}
	}
	if err := cw.WriteAll(rows); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}
