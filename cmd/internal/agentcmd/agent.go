package agentcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/parityhpc/parity/scheduler/agent"
	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/scheduler/agent/nodecheck"
	"github.com/parityhpc/parity/scheduler/agent/shim"
	"github.com/parityhpc/parity/scheduler/agent/telemetry"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/httplimit"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/builtin"
)

// Options are what the binary running the agent brings to it.
type Options struct {
	// Version is the binary's version, sent at registration.
	Version string
	// Sim builds the drivers of a simulated machine (--sim, --sim-lab);
	// nil in a binary without the simulators, which refuses those flags.
	Sim func(ctx context.Context, r SimRequest) ([]vendors.Driver, func(), error)
	// SimNames are the --sim templates, for the help text.
	SimNames []string
	// ShimArgs re-execute this binary as the job supervisor when no
	// parity-shim sits beside it: "agent", "shim" for parity, "shim" for
	// a binary whose root command is the agent.
	ShimArgs []string
}

// SimRequest names the simulated machine --sim or --sim-lab asks for.
type SimRequest struct {
	Name, Root, Lab, Node, Spool, Hostname string
	Seed                                   int64
	// DeviceNodes: confined jobs meet real device nodes (mknod), so the
	// cgroup's device rules can be observed.
	DeviceNodes bool
}

// exitError carries the job supervisor's exit status to the binary's main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

func newAgentCmd() *cobra.Command {
	return New(Options{Version: "dev", ShimArgs: []string{"agent", "shim"}})
}

// New is the node agent (the slurmd role) and, hidden below it, the
// node's job supervisor the agent re-executes its binary as when no
// parity-shim sits beside it.
func New(opt Options) *cobra.Command {
	var (
		addr, token, tokenFile, ca, node, spool, cgroupRoot, metricsAddr string
		logLevel, simName, simRoot, checkScript, simLab, simNode         string
		configFile                                                       string
		seed                                                             int64
		noIsolation                                                      bool
		killWait, sampleEvery                                            time.Duration
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the node agent: register, heartbeat, launch and supervise jobs (the slurmd role)",
		Long: `Runs the node agent. It discovers the node's devices with the vendor drivers,
registers with the controller, and launches each batch job as its owner in
a cgroup with the allocated CPUs, a memory limit and a device allow-list
(every other GPU's device node gives EPERM). Jobs run under the node's job
supervisor (parity-shim, one process for all of them), so an agent restart
re-attaches to them and still reports their real exit codes.
Device telemetry is served on --metrics-addr under the standard GPU exporter's
metric names, so existing dashboards read every vendor's devices.

The node's drivers come from --config: in-tree drivers by name, each with
its own settings block, and out-of-tree adapters on unix sockets, which the
agent supervises: while an adapter is gone, hung or sends an inventory the
node cannot hold its devices are drained (the node's other devices and jobs
are not touched) and it reconnects with backoff; its devices return through
the health policy once it is back. Without --config every in-tree driver
runs with its defaults.

Without usable cgroups jobs still run, without isolation; the agent says so
at start. With --sim the real drivers run on a built-in simulated machine
(` + strings.Join(opt.SimNames, ", ") + `), whose CPUs the agent maps onto this host's.`,
		Example: `  parity agent --controller ctl:6817 --token-file /etc/parity/n1.token --node n1
  parity agent --node sim1 --sim dgx-h100 --spool /tmp/parity/sim1
  parity agent --node n1 --config /etc/parity/agent.yaml --token-file /etc/parity/n1.token

  # /etc/parity/agent.yaml
  drivers:
    - name: cpu
      settings: {hostname: n1}
    - plugin: unix:///run/parity/acme.sock
      connectTimeout: 10s
      callTimeout: 5s
      reconnect: {min: 1s, max: 1m}`,
		Args: cobra.NoArgs,
	}
	// The in-tree drivers are registered before the flags are declared:
	// their deprecated flags become hidden aliases of their settings.
	registry, regErr := builtin.Registry()
	if regErr != nil {
		registry = vendors.NewRegistry()
	}
	deprecated := declareDeprecatedFlags(cmd, registry)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if regErr != nil {
			return regErr
		}
		var level slog.Level
		if err := level.UnmarshalText([]byte(logLevel)); err != nil {
			return fmt.Errorf("--log-level=%s: %w", logLevel, err)
		}
		log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
		tok, err := agentToken(token, tokenFile)
		if err != nil {
			return err
		}
		var nodeCfg agent.NodeConfig
		if configFile != "" {
			if nodeCfg, err = agent.LoadNodeConfig(configFile); err != nil {
				return err
			}
		}
		return runAgent(cmd.Context(), log, agentOptions{addr: addr, token: tok, ca: ca, node: node, spool: spool,
			cgroupRoot: cgroupRoot, metricsAddr: metricsAddr, simName: simName, simRoot: simRoot, seed: seed,
			killWait: killWait, sampleEvery: sampleEvery, checkScript: checkScript,
			simLab: simLab, simNode: simNode, noIsolation: noIsolation, nodeConfig: nodeCfg,
			opt: opt, registry: registry, driverFlags: func(entries []vendors.Entry) ([]vendors.Entry, error) {
				return applyDeprecatedFlags(cmd, deprecated, entries, log)
			}})
	}
	f := cmd.Flags()
	f.StringVar(&addr, "controller", "", "controller address (default $PARITY_CONTROLLER or "+client.DefaultAddr+")")
	f.StringVar(&token, "token", "", "agent token bound to this node (default $PARITY_TOKEN, else ~/.config/parity/token); visible in ps, prefer --token-file")
	f.StringVar(&tokenFile, "token-file", "", "file holding the agent token (parity token create --role agent --node NAME), readable by root only")
	f.StringVar(&ca, "ca", "", "PEM file of the CA that signed the controller's TLS certificate (default $"+client.EnvCA+"; unset: plain TCP)")
	f.StringVar(&node, "node", "", "node name (default: the host name)")
	f.StringVar(&spool, "spool", "", "spool directory for job scripts, state and the job supervisor's socket (default /run/parity/NODE: runtime state, on tmpfs where /run is)")
	f.StringVar(&configFile, "config", "", "the agent's config file (YAML): the node's drivers, in-tree ones with their settings and out-of-tree adapters on their sockets (default: every in-tree driver with its defaults)")
	f.StringVar(&cgroupRoot, "cgroup-root", "/parity", "cgroup parent of every job group")
	f.StringVar(&metricsAddr, "metrics-addr", ":9400", `Prometheus /metrics address ("off" disables)`)
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&simName, "sim", "", "run the drivers on a built-in simulated machine (template name)")
	f.StringVar(&simRoot, "sim-root", "", "directory for the simulated machine's files (default: under the spool)")
	f.Int64Var(&seed, "seed", 1, "seed for simulated device identities")
	f.DurationVar(&killWait, "kill-wait", launch.DefaultKillWait, "time between SIGTERM and SIGKILL when a job is cancelled or times out")
	f.DurationVar(&sampleEvery, "sample-interval", time.Second, "device sampling period")
	f.StringVar(&checkScript, "health-check-script", "", "site node check (NHC-style): exit 0 passes, anything else drains the node with its first output line")
	f.BoolVar(&noIsolation, "no-isolation", false, "run jobs without cgroups even where they work")
	// A process lab's agents build their node's simulated machine from the
	// lab's directory, as the in-process lab does (started by `parity lab up --processes`).
	f.StringVar(&simLab, "sim-lab", "", "directory of a running process lab whose node this agent serves")
	f.StringVar(&simNode, "sim-node", "", "the lab node whose simulated machine to build (default: --node)")
	_ = f.MarkHidden("sim-lab")
	_ = f.MarkHidden("sim-node")
	cmd.AddCommand(&cobra.Command{
		Use:    "shim serve",
		Short:  "Supervise the node's jobs (started by the agent, not by hand)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if code := shim.Main(args); code != 0 {
				return &exitError{code: code, err: fmt.Errorf("job supervisor failed")}
			}
			return nil
		},
	})
	return cmd
}

// agentToken reads --token-file when given (it and --token exclude each
// other); otherwise the token is --token's, resolved as the user verbs do.
func agentToken(token, file string) (string, error) {
	if file == "" {
		return token, nil
	}
	if token != "" {
		return "", errors.New("--token and --token-file: give one of them")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("--token-file=%s: the file is empty", file)
	}
	return t, nil
}

type agentOptions struct {
	addr, token, ca, node, spool, cgroupRoot, metricsAddr string
	simName, simRoot, checkScript, simLab, simNode        string
	opt                                                   Options
	registry                                              *vendors.Registry
	nodeConfig                                            agent.NodeConfig
	// driverFlags maps the deprecated driver flags into the entries.
	driverFlags           func([]vendors.Entry) ([]vendors.Entry, error)
	seed                  int64
	killWait, sampleEvery time.Duration
	noIsolation           bool
}

func runAgent(ctx context.Context, log *slog.Logger, o agentOptions) error {
	if o.node == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("--node not given and no host name: %w", err)
		}
		o.node, _, _ = strings.Cut(h, ".")
	}
	if o.spool == "" {
		// Runtime state, as containerd keeps its under /run: a job's files
		// live as long as the job, which a reboot ends anyway, and on tmpfs
		// their create and delete cost no journal work per job.
		o.spool = filepath.Join("/run/parity", o.node)
	}
	tok, err := client.ResolveToken(o.token)
	if err != nil {
		return err
	}
	var mgr *cgroup.Manager
	if o.noIsolation {
		log.Warn("JOB ISOLATION DISABLED (--no-isolation): jobs run without cpuset, memory limit or device allow-list")
	} else {
		mode, why := cgroup.Detect()
		if mgr, err = cgroup.NewManager(mode); err != nil {
			log.Error("JOB ISOLATION UNAVAILABLE: jobs will run without cpuset, memory limit or device allow-list", "cgroups", why, "err", err)
			mgr = nil
		}
	}
	found, closeDrivers, err := agentDrivers(ctx, log, o, mgr != nil && os.Geteuid() == 0)
	if err != nil {
		return err
	}
	defer closeDrivers()
	for name, why := range found.Skipped {
		log.Info("driver skipped", "driver", name, "why", why)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary for the job shim: %w", err)
	}
	rt, err := launch.New(launch.Config{Node: o.node, SpoolDir: o.spool, Cgroups: mgr, CgroupRoot: o.cgroupRoot,
		Shim: shim.Command(exe, o.opt.ShimArgs...), KillWait: o.killWait, Logger: log})
	if err != nil {
		return err
	}
	defer rt.Close()
	var dialOpts []grpc.DialOption
	if ca := cmp.Or(o.ca, os.Getenv(client.EnvCA)); ca != "" {
		opt, err := client.WithCA(ca)
		if err != nil {
			return err
		}
		dialOpts = append(dialOpts, opt)
	}
	cl, err := client.Dial(ctx, client.ResolveAddr(o.addr), tok, dialOpts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	col := telemetry.NewCollector(found.Inventory, telemetry.CollectorOptions{Hostname: o.node, Holders: rt.Holders,
		Running: func() int { return len(rt.Running()) }})
	if o.metricsAddr != "off" && o.metricsAddr != "" {
		stop, err := serveMetrics(o.metricsAddr, col, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	// Node checks in the spirit of LBNL NHC: room on the spool, free
	// memory, and the site's own script when one is given. The spool holds
	// scripts and small records (on a tmpfs /run of a few hundred MB on
	// small nodes), so tens of MB free is room.
	checks := []nodecheck.Check{
		nodecheck.DiskFree{Path: o.spool, MinFreeBytes: 64 << 20, MinFreePct: 1},
		nodecheck.Memory{MinAvailableBytes: 256 << 20},
	}
	if o.checkScript != "" {
		checks = append(checks, nodecheck.Script{Path: o.checkScript, Timeout: 30 * time.Second})
	}
	ag, err := agent.New(agent.Config{Node: o.node, Controller: cl, Runtime: rt, Drivers: found.Active, Inventory: found.Inventory,
		Collector: col, SampleInterval: o.sampleEvery, Version: o.opt.Version, Logger: log, NodeChecks: checks})
	if err != nil {
		return err
	}
	err = ag.Run(ctx)
	if errors.Is(err, context.Canceled) {
		log.Info("agent stopping; jobs keep running under the node's supervisor")
		return nil
	}
	return err
}

// inTreeDrivers are this host's in-tree drivers, or those of a simulated
// machine (a process lab's node, or a built-in template) when the binary
// carries the simulators.
func inTreeDrivers(ctx context.Context, log *slog.Logger, o agentOptions, deviceNodes bool) ([]vendors.Driver, func(), error) {
	if o.simLab == "" && o.simName == "" {
		return registryDrivers(ctx, log, o)
	}
	if o.opt.Sim == nil {
		return nil, nil, fmt.Errorf("--sim=%q --sim-lab=%q: this binary has no simulated machines; run `parity agent` for them", o.simName, o.simLab)
	}
	return o.opt.Sim(ctx, SimRequest{Name: o.simName, Root: o.simRoot, Lab: o.simLab, Node: o.simNode, Spool: o.spool,
		Hostname: o.node, Seed: o.seed, DeviceNodes: deviceNodes})
}

func serveMetrics(addr string, col *telemetry.Collector, log *slog.Logger) (func(), error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr=%s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", col.Handler())
	srv := httplimit.Server(mux, httplimit.Limits{}, httplimit.Metrics(), nil, log)
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	log.Info("serving metrics", "addr", lis.Addr().String())
	return func() { srv.Close() }, nil
}
