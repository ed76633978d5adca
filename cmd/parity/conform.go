package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/conformance"
	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/client"
)

type conformOptions struct {
	lab, target, token, vendors string
	allowFaults                 []string
	compare, out, focus         string
	history                     string
	historyKeep                 int
	keep                        bool
	workdir, topology, ledger   string
	nodeParity                  string
	account, exemptAccount      string
	healthWait, jobTimeout      time.Duration
	controllers                 int
}

func newConformCmd() *cobra.Command {
	var o conformOptions
	cmd := &cobra.Command{
		Use:   "conform",
		Short: "Run the conformance suite on a lab or a live cluster and write its report",
		Long: `Runs the conformance suite — placement, isolation, accounting, health and
reclamation, the driver contract, and parity across vendors — once per
vendor, prints the spec × vendor matrix and writes report.html, report.json
and junit.xml to --out. It exits non-zero when any result fails (the exit
status says how: see below).

With --history DIR it keeps every run's report.json in DIR (named
report-<start, UTC>.json, so they sort by time; --history-keep N keeps the
latest N) and the report shows, per spec and vendor, a strip of the last 30
runs, marks results that flip between passing and failing (flaky) and
those that got markedly slower, and says what is new since the last run
and since the last green one.

Without --target it starts the built-in "default" lab (or --lab NAME|FILE)
in this process — a real controller and one agent per node over simulated
machines for the in-tree drivers (` + inTreeDriverNames() + `) — and removes it afterwards (--keep
leaves its directory). Jobs run confined in cgroups when run as root.

With --target ADDR --token TOKEN --vendors FILE it runs against a live
cluster; FILE names the partition (and feature) of each vendor's nodes.
There time is real: it first says how long the selected specs may wait
(the health and reclamation windows, each bounded by --health-wait, and
each job by --job-timeout).
Specs that drain, requeue or fault a node run only on nodes named with
--allow-faults; the others are reported skipped with the reason. Job output
is read from --workdir, which must be shared with the nodes. The suite's
jobs run parity on the nodes to report what they see (--node-parity).

` + conformExitHelp,
		Example: `  parity conform
  parity conform --lab bench-32 --out /srv/reports/nightly --compare /srv/reports/last/report.json
  parity conform --out /srv/reports/tonight --history /srv/reports/history --history-keep 90
  parity conform --focus 'isolation|parity'
  parity conform --target ctl01:6817 --token "$(cat ~/.config/parity/token)" --vendors vendors.yaml \
      --workdir /shared/conform --allow-faults gpu017`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runConform(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.lab, "lab", "default", "built-in lab name or lab file to start (without --target)")
	f.StringVar(&o.target, "target", "", "controller address of a live cluster to test instead of a lab")
	f.StringVar(&o.token, "token", "", "API token for --target (default $"+client.EnvToken+" or ~/.config/parity/token)")
	f.StringVar(&o.vendors, "vendors", "", "YAML naming each vendor's partition (and feature) on --target")
	f.StringArrayVar(&o.allowFaults, "allow-faults", nil, "live node the suite may drain, requeue and fault (repeatable)")
	f.StringVar(&o.workdir, "workdir", "", "directory shared with the live cluster's nodes for job output")
	f.StringVar(&o.topology, "topology", "", "topology.conf of the live cluster's switches")
	f.StringVar(&o.ledger, "ledger", "", "accounting ledger of the live cluster, if readable from here")
	f.StringVar(&o.nodeParity, "node-parity", "parity", "parity on the live cluster's nodes, which the suite's jobs run to probe (a name looked up on /usr/local/bin:/usr/bin:/bin, or a path)")
	f.StringVar(&o.account, "account", "", "account to charge the suite's jobs (labs: lab)")
	f.StringVar(&o.exemptAccount, "exempt-account", "", "account exempt from idle-GPU reclamation, for the exemption spec")
	f.StringVar(&o.compare, "compare", "", "previous report.json to compare with (new failures first)")
	f.StringVar(&o.history, "history", "", "directory keeping every run's report.json; the report shows the last 30 runs and the exit status tells new failures from known ones")
	f.IntVar(&o.historyKeep, "history-keep", 0, "keep only the latest N runs in --history (0: keep every run)")
	f.StringVar(&o.out, "out", "parity-report", "directory for report.html, report.json and junit.xml")
	f.StringVar(&o.focus, "focus", "", "run only specs whose \"ID vendor name\" matches this regular expression")
	f.BoolVar(&o.keep, "keep", false, "leave the lab's directory (state, spools, logs) after the run")
	f.IntVar(&o.controllers, "controllers", 1, "controllers the lab runs: 1, 3 or 5 (with several, ha/leader-failover crashes the leader once per vendor; with one it is skipped)")
	f.DurationVar(&o.healthWait, "health-wait", 40*time.Second, "how long to wait for a health or reclamation verdict")
	f.DurationVar(&o.jobTimeout, "job-timeout", 2*time.Minute, "how long to wait for one job to start or end")
	cmd.AddCommand(newConformProbeCmd(), newConformDriverCmd(), newConformVerifyCmd())
	return cmd
}

// newConformProbeCmd is what the suite's jobs run on a node.
func newConformProbeCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "probe inspect|mem|procs|fds ARGS",
		Short:              "Report what a job sees (run inside conformance jobs)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := conformance.ProbeMain(args, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return &exitError{code: code, err: fmt.Errorf("conform probe %v failed", args)}
			}
			return nil
		},
	}
}

func runConform(cmd *cobra.Command, o conformOptions) error {
	ctx := cmd.Context()
	stdout := cmd.OutOrStdout()
	// Usage errors leave nothing behind: they come before --out is made.
	if o.target != "" && o.vendors == "" {
		return usageError("conform", "--target needs --vendors FILE naming each vendor's partition")
	}
	switch {
	case o.controllers != 1 && o.controllers != 3 && o.controllers != 5:
		return usageError("conform", "--controllers=%d: a lab runs 1, 3 or 5 controllers", o.controllers)
	case o.target != "" && o.controllers != 1:
		return usageError("conform", "--controllers=%d: only a lab's controllers can be chosen; a live cluster runs those its cluster.yaml lists", o.controllers)
	}
	if o.target != "" && strings.TrimSpace(o.nodeParity) == "" {
		return usageError("conform", "--node-parity: name the parity binary on the nodes")
	}
	var prev *reports.Run
	if o.compare != "" {
		f, err := os.Open(o.compare)
		if err != nil {
			return usageError("conform", "--compare: %v", err)
		}
		prev, err = reports.ReadJSON(f)
		f.Close()
		if err != nil {
			return usageError("conform", "--compare %s: %v", o.compare, err)
		}
	}
	var focus *regexp.Regexp
	if o.focus != "" {
		re, err := regexp.Compile(o.focus)
		if err != nil {
			return usageError("conform", "--focus %q: %v", o.focus, err)
		}
		focus = re
	}
	hist, err := loadConformHistory(o.history, o.historyKeep, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if prev == nil {
		prev = hist.last() // the baseline: --compare's run, else the latest in the history
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return usageError("conform", "--out %s: %v", o.out, err)
	}
	logf, err := os.Create(filepath.Join(o.out, "lab.log"))
	if err != nil {
		return usageError("conform", "--out: %v", err)
	}
	defer logf.Close()
	logger := slog.New(slog.NewTextHandler(logf, nil))
	if o.target == "" && o.exemptAccount == "" {
		o.exemptAccount = cluster.ExemptAccount // a lab's cluster file exempts it
	}
	target, account, err := conformTarget(ctx, o, logger, stdout)
	if err != nil {
		return err
	}
	defer func() {
		if err := target.Close(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "parity: conform: stopping the lab:", err)
		}
	}()
	// ginkgo reports to file descriptor 1; keep it in --out and print
	// our own progress on the real output.
	restore, out, err := conformDivertStdout(filepath.Join(o.out, "ginkgo.log"), stdout)
	if err != nil {
		return err
	}
	tty := conformTTY(out)
	if _, movable := target.(conformance.Clock); !movable {
		// A live cluster keeps real time: say up front what that costs.
		fmt.Fprintln(out, conformance.PlanRealTime(target.Vendors(), conformance.Options{Focus: focus, HealthWait: o.healthWait, JobTimeout: o.jobTimeout}))
	}
	prog := &conformProgress{w: out, tty: tty}
	run, err := conformance.Run(ctx, target, conformance.Options{Focus: focus, Account: account, ExemptAccount: o.exemptAccount,
		HealthWait: o.healthWait, JobTimeout: o.jobTimeout, Progress: prog.update, Version: version, Logger: logger})
	prog.finish()
	restore()
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("conform: %w", err)}
	}
	run.SuiteVersion = conformance.SuiteVersion
	paths, err := reports.WriteFolder(o.out, run, reports.HTMLOptions{Previous: prev, History: hist.past, Now: time.Now()})
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("conform: write the report: %w", err)}
	}
	if err := reports.WriteMatrix(stdout, run, tty); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nReport: %s (also %s, %s)\n", paths.HTML, paths.JSON, paths.JUnit)
	if err := hist.save(stdout, run, paths.JSON); err != nil {
		return &exitError{code: 1, err: err}
	}
	return conformVerdict(stdout, prev, run)
}

// conformTarget builds the lab or live target the flags name, and the
// account its jobs are charged to.
func conformTarget(ctx context.Context, o conformOptions, logger *slog.Logger, stdout io.Writer) (conformance.Target, string, error) {
	if o.target == "" {
		lab, err := labfile.Resolve(o.lab)
		if err != nil {
			return nil, "", usageError("conform", "--lab: %v", err)
		}
		how := ""
		if o.controllers > 1 {
			how = fmt.Sprintf(", %d controllers", o.controllers)
		}
		fmt.Fprintf(stdout, "Starting lab %s (%d nodes%s)…\n", lab.Name, len(lab.NodeList()), how)
		t, err := conformance.NewLab(ctx, conformance.LabOptions{Lab: lab, Keep: o.keep, Logger: logger, Controllers: o.controllers})
		if err != nil {
			return nil, "", &exitError{code: 1, err: fmt.Errorf("conform: %w", err)}
		}
		if o.keep {
			fmt.Fprintf(stdout, "Lab directory (kept): %s\n", t.Dir())
		}
		if ok, why := t.Isolation(); !ok {
			fmt.Fprintf(stdout, "WARNING: jobs run without isolation (%s); isolation specs will be skipped\n", why)
		}
		return t, conformOr(o.account, "lab"), nil
	}
	tok, err := client.ResolveToken(o.token)
	if err != nil {
		return nil, "", usageError("conform", "%v", err)
	}
	data, err := os.ReadFile(o.vendors)
	if err != nil {
		return nil, "", usageError("conform", "--vendors: %v", err)
	}
	vf, err := conformance.ParseVendorsFile(o.vendors, data)
	if err != nil {
		return nil, "", usageError("conform", "%v", err)
	}
	t, err := conformance.NewLive(ctx, conformance.LiveOptions{Addr: o.target, Token: tok, Vendors: vf, AllowFaults: o.allowFaults,
		WorkDir: o.workdir, Topology: o.topology, Ledger: o.ledger, Probe: []string{o.nodeParity, "conform", "probe"}})
	if err != nil {
		return nil, "", &exitError{code: 1, err: fmt.Errorf("conform: %w", err)}
	}
	return t, o.account, nil
}

func conformOr(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// divertStdout points file descriptor 1 at path while the suite runs. When
// w is this process's standard output, the returned writer is a duplicate
// of it, so progress still reaches the terminal; restore undoes it.
func conformDivertStdout(path string, w io.Writer) (restore func(), out io.Writer, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, usageError("conform", "--out: %v", err)
	}
	saved, err := unix.Dup(1)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("conform: keep standard output: %w", err)
	}
	dup := os.NewFile(uintptr(saved), "stdout")
	if err := unix.Dup2(int(f.Fd()), 1); err != nil {
		dup.Close()
		f.Close()
		return nil, nil, fmt.Errorf("conform: divert standard output: %w", err)
	}
	out = w
	if of, ok := w.(*os.File); ok && of.Fd() == 1 {
		out = dup
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = unix.Dup2(saved, 1)
			dup.Close()
			f.Close()
		})
	}, out, nil
}

func conformTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// progress prints specs done / total and the current spec: one updated
// line on a terminal, plain lines otherwise.
type conformProgress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	start time.Time
}

func (p *conformProgress) update(ev conformance.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.start.IsZero() {
		p.start = time.Now()
	}
	who := ev.Vendor
	if who == "" {
		who = "all vendors"
	}
	width := len(fmt.Sprint(ev.Total))
	switch {
	case !ev.Ended && p.tty:
		fmt.Fprintf(p.w, "\r\x1b[K[%*d/%d] %s [%s] …", width, ev.Done, ev.Total, ev.Spec, who)
	case ev.Ended && p.tty && ev.Status.Failing():
		fmt.Fprintf(p.w, "\r\x1b[K%s %s [%s]\n", conformWord(ev.Status), ev.Spec, who)
	case ev.Ended && !p.tty:
		fmt.Fprintf(p.w, "[%*d/%d] %-4s %s [%s] (%s)\n", width, ev.Done, ev.Total, conformWord(ev.Status), ev.Spec, who,
			time.Since(p.start).Round(time.Second))
	}
}

func (p *conformProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	fmt.Fprintln(p.w)
}

func conformWord(s reports.Status) string {
	switch s {
	case reports.StatusPassed:
		return "PASS"
	case reports.StatusFailed:
		return "FAIL"
	case reports.StatusSkipped:
		return "SKIP"
	}
	return "ERR"
}
