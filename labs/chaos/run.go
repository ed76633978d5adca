package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/parityhpc/parity/labs/labfile"
)

// Options say what to run.
type Options struct {
	// Exe is the parity binary the lab's daemons and the CLI cases run as.
	Exe string
	// Dir holds each scenario's lab (DIR/NAME, logs under DIR/NAME/logs).
	Dir string
	// Scenarios selects scenarios by name (see Scenarios); empty runs all.
	Scenarios []string
	// Trials is how many times the kill scenario kills the controller.
	Trials int
	// Streams is how many clients submit held jobs during a kill trial.
	Streams int
	// Seed picks the kill moments and the GPU jobs' shapes.
	Seed int64
	// RSSCeiling is how far the controller's resident memory may grow
	// under unauthenticated load (docs/ARCHITECTURE.md, "Memory under load").
	RSSCeiling int64
	// SlowWait is how long the slow-body case waits for the server to
	// close a connection that stalls mid-body.
	SlowWait time.Duration
	// LedgerLag is the longest a spooled accounting record may take to
	// reach the ledger after an outage ends.
	LedgerLag time.Duration
	// Progress receives a line per step; nil discards them.
	Progress io.Writer
	Logger   *slog.Logger

	lab *labfile.Lab // the lab every scenario runs on (chaosLab)
}

// Defaults.
const (
	DefaultTrials     = 20
	DefaultStreams    = 4
	DefaultRSSCeiling = 512 << 20
	DefaultSlowWait   = 45 * time.Second
	DefaultLedgerLag  = 5 * time.Second
)

// scenario is one named part of a run, on a lab of its own.
type scenario struct {
	name, what string
	lab        func() labOptions
	run        func(context.Context, *lab, *Options) []Row
}

func scenarios() []scenario {
	return []scenario{
		{"kill", "the controller killed with SIGKILL during a submission stream, Trials times", killLab, runKill},
		{"agent", "a running job's agent down past the node-down timeout", agentLab, runAgentDown},
		{"authz", "who may do what over the CLI, gRPC and HTTP", plainLab("authz"), runAuthz},
		{"input", "bad submissions over gRPC and HTTP", plainLab("input"), runInput},
		{"load", "unauthenticated 4 MiB calls and slow HTTP bodies", plainLab("load"), runLoad},
		{"outage", "the accounting ledger locked, the state directory full", outageLab, runOutage},
	}
}

func plainLab(name string) func() labOptions {
	return func() labOptions { return labOptions{name: name} }
}

// Scenarios lists the scenarios' names and what each does, in run order.
func Scenarios() [][2]string {
	var out [][2]string
	for _, s := range scenarios() {
		out = append(out, [2]string{s.name, s.what})
	}
	return out
}

// chaosLab is the lab every scenario runs on: two 8-GPU nodes (partition
// gpu) and two CPU-only nodes (partition cpu, where held jobs and the
// agent-down job go).
func chaosLab() (*labfile.Lab, error) {
	return labfile.Parse("chaos", []byte(`name: chaos
seed: 1
nodes:
  - names: gpu[1-2]
    template: dgx-h100
    features: [h100]
  - names: cpu[1-2]
    template: cpu
    features: [cpu]
partitions:
  - name: gpu
    nodes: gpu[1-2]
    default: true
  - name: cpu
    nodes: cpu[1-2]
`))
}

// Run runs the selected scenarios one after the other, each on a fresh
// lab, and returns their rows. The error is for what stopped the run as
// a whole (bad options); a scenario that could not run is a failed row.
func Run(ctx context.Context, o Options) (*Table, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	lab, err := chaosLab()
	if err != nil {
		return nil, err
	}
	t := &Table{Started: time.Now()}
	for _, s := range scenarios() {
		if len(o.Scenarios) > 0 && !slices.Contains(o.Scenarios, s.name) {
			continue
		}
		o.progressf("%s: %s", s.name, s.what)
		t0 := time.Now()
		rows := runOne(ctx, &o, lab, s)
		for i := range rows {
			if rows[i].Elapsed == 0 {
				rows[i].Elapsed = time.Since(t0)
			}
			o.progressf("%s: %s: %s", s.name, rows[i].Verdict, rows[i].figures())
		}
		t.Rows = append(t.Rows, rows...)
	}
	t.Elapsed = time.Since(t.Started)
	return t, nil
}

func runOne(ctx context.Context, o *Options, lab *labfile.Lab, s scenario) (rows []Row) {
	lo := s.lab()
	oo := *o
	oo.lab = lab
	l, err := upLab(ctx, &oo, lo)
	if err != nil {
		r := Row{Scenario: s.name}
		r.fail("could not start the lab: %v", err)
		return []Row{r}
	}
	defer func() {
		if err := l.down(context.WithoutCancel(ctx)); err != nil {
			o.Logger.Warn("lab down", "scenario", s.name, "err", err)
		}
	}()
	// A bug of the harness fails its row; the lab still goes down.
	defer func() {
		if p := recover(); p != nil {
			r := Row{Scenario: s.name}
			r.fail("the harness panicked: %v", p)
			rows = append(rows, r)
		}
	}()
	return s.run(ctx, l, &oo)
}

func (o *Options) defaults() error {
	if o.Dir == "" {
		return errors.New("chaos: no directory for the labs")
	}
	if o.Exe == "" {
		return errors.New("chaos: no parity binary")
	}
	known := map[string]bool{}
	var names []string
	for _, s := range scenarios() {
		known[s.name] = true
		names = append(names, s.name)
	}
	for _, s := range o.Scenarios {
		if !known[s] {
			return fmt.Errorf("chaos: no scenario %q (there are %s)", s, strings.Join(names, ", "))
		}
	}
	if o.Trials <= 0 {
		o.Trials = DefaultTrials
	}
	if o.Streams <= 0 {
		o.Streams = DefaultStreams
	}
	if o.RSSCeiling <= 0 {
		o.RSSCeiling = DefaultRSSCeiling
	}
	if o.SlowWait <= 0 {
		o.SlowWait = DefaultSlowWait
	}
	if o.LedgerLag <= 0 {
		o.LedgerLag = DefaultLedgerLag
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

func (o *Options) progressf(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "chaos: "+format+"\n", args...)
	}
}
