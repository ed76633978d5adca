package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/labs/replay"
	"github.com/parityhpc/parity/labs/trace"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/core"
)

// simFlags are the options of `parity sim`.
type simFlags struct {
	lab, policy, compare, configPath, estimates, jsonPath, htmlPath string
	gpus, extend, published, strict, quiet                          bool
	maxReservations                                                 int
}

func newSimCmd() *cobra.Command {
	var f simFlags
	cmd := &cobra.Command{
		Use:   "sim TRACE",
		Short: "Replay a workload trace through the scheduling core in simulated time",
		Long: `Replays a recorded workload through the same scheduling core the controller
uses, in simulated time: jobs arrive at their submit time, run for their
recorded runtime and are killed at their requested time limit. It prints
utilisation, mean/median/p95 wait, mean bounded slowdown (tau = 10 s),
makespan, GPU fragmentation (free GPUs no waiting job can use) and per-user
fairness, and with --json writes them, the per-user rows and the chart
series as JSON; --html writes a self-contained page with the table and
charts (utilisation, wait and queue over time, the wait distribution, and
the policies side by side).

TRACE is a Standard Workload Format file (.swf, Parallel Workloads Archive)
or a CSV of GPU jobs (.csv: submit, runtime, gpus, and optionally id, nodes,
user, account/vc/cluster and requested time; Microsoft Philly's columns are
understood). Corrupt lines are counted and reported with their line numbers;
--strict fails on the first one, and on a job larger than the lab.

--lab picks the cluster: pool:N (one flat pool of N processors),
cpu:NODESxCPUS or gpu:NODESxGPUS. Without it an SWF trace runs on a flat
pool of the header's MaxProcs (else MaxNodes), as the scheduling literature
does; GPU traces need a gpu lab. SWF processors are CPUs, or GPUs with
--gpus. Named lab files come with the labs work.

--policy is fcfs (no backfill), easy or conservative; --compare runs several
on the same trace and shows them side by side. --config reads a cluster
file for priority weights, fair-share half-life and reservation depth (its
scheduler.backfill is the default policy); without one the queue is in
submit order. --extend-estimates raises a requested time shorter than the
runtime to it instead of killing the job at its limit. --published replays
as the predictsim simulator behind the published SWF figures does (SC'15:
KTH-SP2 EASY bounded slowdown 92.58, 71.72 with --estimates exact): the
estimate is max(requested, runtime) but the job ends at its request, jobs
are sized by their requested processors, and the scheduler runs once per
event rather than once per instant.`,
		Example: `  parity sim KTH-SP2-1996-2.swf --policy easy --published
  parity sim KTH-SP2-1996-2.swf --compare --json kth.json --html kth.html
  parity sim philly.csv --lab gpu:128x8 --compare=fcfs,easy
  parity sim trace.swf --lab cpu:64x32 --config cluster.yaml --estimates exact`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 && cmd.Flags().Changed("compare") {
				if _, err := replay.ParsePolicies(args[1]); err == nil {
					return fmt.Errorf("write --compare=%s (with '='): a bare --compare compares every policy", args[1])
				}
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSim(cmd, args[0], &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.lab, "lab", "", "cluster: pool:N, cpu:NODESxCPUS or gpu:NODESxGPUS (default: a pool of the trace header's MaxProcs)")
	fl.StringVar(&f.policy, "policy", "", "fcfs, easy or conservative (default: the config's scheduler.backfill, else easy)")
	fl.StringVar(&f.compare, "compare", "", "replay several policies side by side: --compare for all, or --compare=fcfs,easy")
	fl.Lookup("compare").NoOptDefVal = "all"
	fl.StringVar(&f.configPath, "config", "", "cluster file (YAML) with priority weights, fair share and scheduler options")
	fl.StringVar(&f.estimates, "estimates", "user", "what the scheduler is told a job will take: user (requested time) or exact (recorded runtime)")
	fl.BoolVar(&f.extend, "extend-estimates", false, "raise a requested time shorter than the runtime to the runtime instead of killing the job at it")
	fl.BoolVar(&f.published, "published", false, "replay as the simulator behind the published SWF figures does (implies --extend-estimates)")
	fl.BoolVar(&f.gpus, "gpus", false, "SWF processors are GPUs (needs a gpu lab)")
	fl.BoolVar(&f.strict, "strict", false, "fail on the first corrupt trace line and on a job larger than the lab")
	fl.StringVar(&f.jsonPath, "json", "", "write the results (metrics, users, chart series) as JSON to this file; - for stdout instead of the table")
	fl.StringVar(&f.htmlPath, "html", "", "write a self-contained HTML page (metrics table, charts over time, policies side by side) to this file")
	fl.IntVar(&f.maxReservations, "max-reservations", 0, "conservative backfill: reservations per pass (0: the config's, else 100; -1: no cap)")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr")
	return cmd
}

func runSim(cmd *cobra.Command, path string, f *simFlags) error {
	defer tuneSimGC()()
	opts, policies, err := simOptions(f)
	if err != nil {
		return err
	}
	tr, err := trace.Open(path, trace.Options{Strict: f.strict})
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	reportSimBadLines(stderr, path, tr)
	if !f.quiet {
		opts.Progress = simProgressPrinter(stderr, len(policies) > 1)
	}
	cmp, err := replay.Compare(cmd.Context(), tr, opts, policies)
	if err != nil {
		return err
	}
	if f.htmlPath != "" {
		if err := writeSimHTML(f.htmlPath, path, cmp); err != nil {
			return err
		}
	}
	if f.jsonPath != "" {
		var v any = cmp
		if len(cmp.Results) == 1 {
			v = cmp.Results[0]
		}
		if err := writeSimJSON(cmd.OutOrStdout(), f.jsonPath, v); err != nil {
			return err
		}
		if f.jsonPath == "-" {
			return nil
		}
	}
	return replay.WriteTable(cmd.OutOrStdout(), cmp.Results...)
}

// tuneSimGC makes the collector run less often during a replay, unless
// GOGC or GOMEMLIMIT is set: every pass builds a fresh scheduling state and
// keeps little of it, so at the default the collector runs thousands of
// times (KTH-SP2 under EASY: 1.0 s → 0.8 s here); the soft limit keeps a
// million-job replay far below 2 GB (768 MiB peak heap measured). It returns
// the function that restores the previous settings.
func tuneSimGC() func() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gc := debug.SetGCPercent(400)
	limit := debug.SetMemoryLimit(1536 << 20)
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}
}

// simOptions turns flags (and the cluster file) into replay options and
// the policies to run.
func simOptions(f *simFlags) (replay.Options, []replay.Policy, error) {
	o := replay.Options{ProcsAsGPUs: f.gpus, Estimates: replay.Estimates(f.estimates), ExtendShortEstimates: f.extend,
		StrictFit: f.strict, MaxReservations: f.maxReservations}
	if f.published {
		o = o.Published()
	}
	if o.Estimates != replay.EstimatesUser && o.Estimates != replay.EstimatesExact {
		return o, nil, fmt.Errorf("--estimates=%q: want user or exact", f.estimates)
	}
	if f.lab != "" {
		lab, err := replay.ParseLab(f.lab)
		if err != nil {
			return o, nil, err
		}
		o.Lab = lab
	}
	defaultPolicy := replay.PolicyEASY
	if f.configPath != "" {
		c, err := config.Load(f.configPath)
		if err != nil {
			return o, nil, err
		}
		cfg := c.CoreConfig()
		o.Scheduler = &cfg
		defaultPolicy = simPolicyOf(cfg.Backfill)
	}
	if f.compare != "" {
		if f.policy != "" {
			return o, nil, errors.New("--policy and --compare exclude each other: list the policies in --compare")
		}
		ps, err := replay.ParsePolicies(f.compare)
		return o, ps, err
	}
	p := defaultPolicy
	if f.policy != "" {
		var err error
		if p, err = replay.ParsePolicy(f.policy); err != nil {
			return o, nil, err
		}
	}
	return o, []replay.Policy{p}, nil
}

func simPolicyOf(b core.BackfillMode) replay.Policy {
	switch b {
	case core.BackfillNone:
		return replay.PolicyFCFS
	case core.BackfillConservative:
		return replay.PolicyConservative
	}
	return replay.PolicyEASY
}

// reportSimBadLines tells the user which lines were corrupt (lenient mode).
func reportSimBadLines(w io.Writer, path string, tr *trace.Trace) {
	if tr.BadLines == 0 {
		return
	}
	fmt.Fprintf(w, "parity sim: %s: %d corrupt line(s) skipped (--strict fails on the first):\n", path, tr.BadLines)
	for i, e := range tr.Errors {
		if i == 10 {
			fmt.Fprintf(w, "  … %d more\n", tr.BadLines-10)
			break
		}
		fmt.Fprintf(w, "  %v\n", e)
	}
}

// simProgressPrinter prints at most one progress line a second, and a last
// line for replays that took longer than that.
func simProgressPrinter(w io.Writer, several bool) func(replay.Progress) {
	var start, last time.Time
	run := 1
	return func(p replay.Progress) {
		now := time.Now()
		if start.IsZero() {
			start, last = now, now
			return
		}
		if now.Sub(last) < time.Second && !(p.Done && now.Sub(start) >= time.Second) {
			if p.Done {
				run++
				start = time.Time{}
			}
			return
		}
		last = now
		prefix := "sim"
		if several {
			prefix = fmt.Sprintf("sim (replay %d)", run)
		}
		pct := 100 * float64(p.Finished) / float64(max(p.Total, 1))
		fmt.Fprintf(w, "%s: %5.1f%% — %d of %d jobs finished, %d waiting, simulated day %.1f, %d passes, %s elapsed\n",
			prefix, pct, p.Finished, p.Total, p.Submitted-p.Started, float64(p.SimTime)/86400, p.Passes, now.Sub(start).Round(100*time.Millisecond))
		if p.Done {
			run++
			start = time.Time{}
		}
	}
}

// writeSimHTML writes the replay's HTML page to path.
func writeSimHTML(path, tracePath string, cmp *replay.Comparison) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	title := "Trace replay of " + filepath.Base(tracePath)
	if err := replay.WriteHTML(f, cmp, title, time.Now()); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// writeSimJSON writes v to path, or to stdout for "-".
func writeSimJSON(stdout io.Writer, path string, v any) error {
	if path == "-" {
		return encodeSimJSON(stdout, v)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := encodeSimJSON(f, v); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

func encodeSimJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
