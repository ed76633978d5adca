package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/userverbs"
	"github.com/parityhpc/parity/scheduler/accounting"
)

// Report kinds and the names they answer to: Parity's and sreport's
// two-word forms ("cluster utilization", "user topusage").
const (
	reportUtilization = "cluster-utilization"
	reportTopUsers    = "top-users"
	reportTopAccounts = "top-accounts"
)

func reportKind(words []string) (string, error) {
	name := strings.ToLower(strings.Join(words, " "))
	switch name {
	case reportUtilization, "cluster utilization", "utilization":
		return reportUtilization, nil
	case reportTopUsers, "user topusage", "user top":
		return reportTopUsers, nil
	case reportTopAccounts, "account topusage", "account top":
		return reportTopAccounts, nil
	}
	return "", fmt.Errorf("unknown report %q (want %s, %s or %s)", name, reportUtilization, reportTopUsers, reportTopAccounts)
}

type reportOptions struct {
	ledger, start, end, unit, tres, capacity string
	csv                                      bool
	top                                      int
}

func newReportCmd() *cobra.Command {
	cmd := newReportCmdWith(realAcctEnv())
	cmd.AddCommand(userverbs.NewReportReclaimCmd())
	return cmd
}

func newReportCmdWith(env acctEnv) *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report cluster-utilization|top-users|top-accounts|reclaim [start=TIME] [end=TIME] [topcount=N]",
		Short: "Usage reports over a date range: cluster utilisation, top users and accounts by GPU-hours and billing (sreport)",
		Long: `Sums allocated TRES over [start, end) from the accounting ledger: jobs are
clipped to the window; steps are not counted twice. The default window is
yesterday (sreport's). Usage is in TRES-minutes unless -t says hours,
seconds or percent; gres/gpu in hours is GPU-hours.

cluster-utilization prints Allocated per TRES, and Idle and Reported when
--capacity gives the cluster's TRES (e.g. gres/gpu=64,cpu=1024,billing=2048).
top-users and top-accounts rank by the first TRES of -T. Percentages are of
Reported with --capacity, else of the total allocated.

sreport's forms work too: "cluster utilization", "user topusage", and
start=/end=/topcount= arguments.

"report reclaim" asks the controller instead of the ledger: idle-GPU
reclamations per account and user (see parity report reclaim --help).`,
		Example: `  parity report cluster-utilization --start 2024-03-01 --end 2024-04-01 -t hours --capacity gres/gpu=64
  parity report top-users --start now-7days -t hours --top 5 --csv
  sreport user topusage start=2024-03-01 end=2024-03-08 -t percent`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReport(cmd, env, &o, args) },
	}
	f := cmd.Flags()
	ledgerFlag(cmd, env, &o.ledger)
	f.StringVar(&o.start, "start", "", "window start (default: yesterday 00:00)")
	f.StringVar(&o.end, "end", "", "window end, exclusive (default: today 00:00)")
	f.StringVarP(&o.unit, "time-format", "t", "minutes", "minutes, hours, seconds or percent")
	f.StringVarP(&o.tres, "tres", "T", "gres/gpu,billing", "TRES to report (comma-separated)")
	f.StringVar(&o.capacity, "capacity", "", "the cluster's TRES, for Idle, Reported and percentages")
	f.BoolVar(&o.csv, "csv", false, "CSV instead of a table")
	f.IntVar(&o.top, "top", 10, "how many users or accounts to rank (0: all)")
	return cmd
}

// splitReportArgs separates the report's name from sreport-style
// key=value arguments, which set the matching options.
func splitReportArgs(args []string, o *reportOptions) ([]string, error) {
	var words []string
	for _, a := range args {
		key, val, ok := strings.Cut(a, "=")
		if !ok {
			words = append(words, a)
			continue
		}
		switch strings.ToLower(key) {
		case "start":
			o.start = val
		case "end":
			o.end = val
		case "topcount":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("topcount=%q is not a non-negative number", val)
			}
			o.top = n
		default:
			return nil, fmt.Errorf("unknown report argument %q (want start=, end= or topcount=)", a)
		}
	}
	return words, nil
}

func reportWindow(env acctEnv, o *reportOptions, now time.Time) (time.Time, time.Time, error) {
	today := time.Date(now.In(env.loc).Year(), now.In(env.loc).Month(), now.In(env.loc).Day(), 0, 0, 0, 0, env.loc)
	start, end := today.AddDate(0, 0, -1), today
	var err error
	if o.start != "" {
		if start, err = accounting.ParseTime(o.start, now, env.loc); err != nil {
			return start, end, fmt.Errorf("start: %w", err)
		}
	}
	if o.end != "" {
		if end, err = accounting.ParseTime(o.end, now, env.loc); err != nil {
			return start, end, fmt.Errorf("end: %w", err)
		}
	}
	if !end.After(start) {
		return start, end, fmt.Errorf("end %s is not after start %s", end.In(env.loc).Format("2006-01-02T15:04:05"), start.In(env.loc).Format("2006-01-02T15:04:05"))
	}
	return start, end, nil
}

func runReport(cmd *cobra.Command, env acctEnv, o *reportOptions, args []string) error {
	words, err := splitReportArgs(args, o)
	if err != nil {
		return err
	}
	kind, err := reportKind(words)
	if err != nil {
		return err
	}
	unit, err := accounting.ParseReportUnit(o.unit)
	if err != nil {
		return err
	}
	tres, err := accounting.SplitList("--tres", o.tres)
	if err != nil {
		return err
	}
	for i := range tres {
		tres[i] = strings.ToLower(tres[i])
	}
	var capacity accounting.TRES
	if o.capacity != "" {
		if capacity, err = accounting.ParseTRES(o.capacity); err != nil {
			return fmt.Errorf("--capacity: %w", err)
		}
	}
	if o.top < 0 {
		return fmt.Errorf("--top=%d must not be negative", o.top)
	}
	start, end, err := reportWindow(env, o, env.now())
	if err != nil {
		return err
	}
	ledger, err := openLedger(cmd.Context(), o.ledger)
	if err != nil {
		return err
	}
	defer ledger.Close()
	spans, err := ledger.Usage(cmd.Context(), start, end)
	if err != nil {
		return err
	}
	opt := accounting.ReportOptions{From: start, To: end, Loc: env.loc, Unit: unit, TRES: tres, Capacity: capacity, CSV: o.csv}
	alloc := accounting.Utilization(spans, start, end)
	w := cmd.OutOrStdout()
	switch kind {
	case reportTopUsers:
		return accounting.RenderTopUsage(w, accounting.TopUsage(spans, start, end, accounting.ByUser, tres[0], o.top), accounting.ByUser, alloc, opt)
	case reportTopAccounts:
		return accounting.RenderTopUsage(w, accounting.TopUsage(spans, start, end, accounting.ByAccount, tres[0], o.top), accounting.ByAccount, alloc, opt)
	}
	return accounting.RenderUtilization(w, alloc, opt)
}
