package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/labs/chaos"
)

type chaosFlags struct {
	opts     chaos.Options
	only     []string
	dir      string
	ceiling  int64
	markdown bool
	timeout  time.Duration
}

func newChaosCmd() *cobra.Command {
	f := chaosFlags{opts: chaos.Options{Trials: chaos.DefaultTrials, Streams: chaos.DefaultStreams, Seed: 1,
		SlowWait: chaos.DefaultSlowWait, LedgerLag: chaos.DefaultLedgerLag}, ceiling: chaos.DefaultRSSCeiling >> 20}
	var list strings.Builder
	for _, s := range chaos.Scenarios() {
		fmt.Fprintf(&list, "  %-7s %s\n", s[0], s[1])
	}
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "Kill, starve and attack a process lab, check what must never break, and print a table",
		Long: `Runs each scenario on a fresh process lab (the controller and every agent
separate processes: two 8-GPU nodes, two CPU-only nodes), on loopback only,
and prints a row per scenario with its figures and a verdict:
` + list.String() + `Exits 1 when a hard invariant broke: an acknowledged job lost, a job id
handed out twice, a GPU held by two jobs, a wrong authorisation decision or
bad input not refused, a crash, the controller's memory past --rss-ceiling
under unauthenticated load, or a scenario that could not run. Figures past
a target that is not such an invariant (the ledger's lag, a slow body's
lifetime, the agent-down job's final state) say WARN. Needs root, as labs
do (cgroups, device nodes, a tmpfs for the state-directory outage). The
labs' logs stay in --dir when a row is not ok.`,
		Example: `  sudo parity chaos
  sudo parity chaos --only kill --trials 5 --seed 7
  sudo parity chaos --only authz,input --markdown`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChaos(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.opts.Trials, "trials", f.opts.Trials, "controller kills in the kill scenario")
	fl.IntVar(&f.opts.Streams, "streams", f.opts.Streams, "clients submitting held jobs during a kill trial")
	fl.Int64Var(&f.opts.Seed, "seed", f.opts.Seed, "seed of the kill moments and the GPU jobs' shapes")
	fl.StringSliceVar(&f.only, "only", nil, "scenarios to run, comma-separated (default: all)")
	fl.StringVar(&f.dir, "dir", "", "directory for the labs (default: a temporary one, removed unless a row is not ok)")
	fl.Int64Var(&f.ceiling, "rss-ceiling", f.ceiling, "MiB the controller's resident memory may grow under unauthenticated load (docs/ARCHITECTURE.md)")
	fl.DurationVar(&f.opts.SlowWait, "slow-wait", f.opts.SlowWait, "how long a stalled HTTP body may stay open before the row warns")
	fl.DurationVar(&f.opts.LedgerLag, "ledger-lag", f.opts.LedgerLag, "longest wait for spooled accounting records after the ledger's outage ends")
	fl.BoolVar(&f.markdown, "markdown", false, "print the table as Markdown")
	fl.DurationVar(&f.timeout, "timeout", 20*time.Minute, "stop the run after this long")
	return cmd
}

func runChaos(ctx context.Context, stdout, stderr io.Writer, f chaosFlags) error {
	if os.Geteuid() != 0 {
		return usageError("chaos", "needs root, as labs do (cgroups, device nodes, a tmpfs)")
	}
	if f.ceiling <= 0 {
		return usageError("chaos", "--rss-ceiling=%d: must be a positive number of MiB", f.ceiling)
	}
	exe, err := os.Executable()
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("chaos: find the parity binary: %w", err)}
	}
	dir, temp := f.dir, f.dir == ""
	if temp {
		if dir, err = os.MkdirTemp("", "parity-chaos-"); err != nil {
			return &exitError{code: 1, err: fmt.Errorf("chaos: %w", err)}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("chaos: %w", err)}
	}
	logf, err := os.Create(filepath.Join(dir, "chaos.log"))
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("chaos: %w", err)}
	}
	defer logf.Close()
	o := f.opts
	o.Exe, o.Dir, o.Scenarios, o.RSSCeiling = exe, dir, f.only, f.ceiling<<20
	o.Progress, o.Logger = stderr, slog.New(slog.NewTextHandler(logf, nil))
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(stderr, "chaos: labs in %s; load %s\n", dir, strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	t, err := chaos.Run(ctx, o)
	if err != nil {
		return usageError("chaos", "%v", err)
	}
	fmt.Fprintf(stdout, "parity chaos %s, %s UTC, %s in all, seed %d\n\n", version, t.Started.UTC().Format("2006-01-02 15:04"), t.Elapsed.Round(time.Second), o.Seed)
	if f.markdown {
		err = t.WriteMarkdown(stdout)
	} else {
		err = t.Write(stdout)
	}
	if err != nil {
		return err
	}
	if t.Failed() {
		return &exitError{code: 1, err: fmt.Errorf("chaos: a hard invariant broke (see the table); the labs' logs are in %s", dir)}
	}
	if temp && t.Worst() <= chaos.Skip {
		os.RemoveAll(dir)
	}
	return nil
}
