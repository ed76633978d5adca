package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/scheduler/agent"
	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	agentshim "github.com/parityhpc/parity/scheduler/agent/shim"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/vendors"
)

// Options say how to run a lab.
type Options struct {
	Lab *labfile.Lab
	// Dir holds everything the lab writes (controller state, node roots,
	// spools); it is created if missing.
	Dir string
	// Shim is the command that runs each node's job supervisor (default:
	// parity-shim beside this executable, else its `agent shim`); tests
	// pass a re-exec of the test binary.
	Shim []string
	// Users may submit jobs (account "lab"); "root", "admin" and "nobody" always can.
	Users []string
	// Admins are users with the admin role besides "root" and "admin".
	Admins []string
	Logger *slog.Logger
	// NoIsolation runs jobs without cgroups even where they work.
	NoIsolation bool
	// WrapDriver, when set, replaces each driver of each node before
	// discovery (the conformance suite breaks one vendor on purpose with it).
	WrapDriver func(node string, d vendors.Driver) vendors.Driver
	// Templates are node templates besides the built-in ones (by name),
	// such as a machine whose accelerator is an out-of-tree adapter.
	Templates map[string]presets.Template
	// MetricsAddr is where the controller serves Prometheus metrics
	// ("127.0.0.1:0" picks a port); empty keeps them off.
	MetricsAddr string
	// Clock, when set, is the controller's clock, which Cluster.Advance
	// moves forward (nil: the host's clock, which cannot be advanced).
	Clock *Clock
	// Preemption defines PreemptQOS, whose jobs preempt the others.
	Preemption bool
	// NoAccounts defines no accounts: the cluster is then Slurm without
	// accounting (accounting_storage/none, as the compat anchor), where a
	// job shows and sees no account it did not name. Anyone may submit.
	NoAccounts bool
	// Controllers is how many controllers replicate the lab's state: 1 (or
	// 0, the default) or 3 or 5, which elect a leader (controllers.go).
	Controllers int
}

// SampleInterval is how often a lab node's agent samples its devices
// (and its drivers poll for faults): a window counted in samples, such as
// health recovery, takes that many of these, of real time or of a
// simulated clock's steps (Advance).
const SampleInterval = time.Second

// Node is one running lab node.
type Node struct {
	Name, Template string
	Machine        *presets.Machine
	Inventory      gres.Inventory
	Runtime        *launch.Runtime
	cancel         context.CancelFunc
	done           chan error
}

// Cluster is a running lab.
type Cluster struct {
	Lab *labfile.Lab
	Dir string
	// Addr is the controller's address, or the controllers' comma-separated
	// list (as PARITY_CONTROLLER takes it) when the lab runs several.
	Addr string
	// Isolation says whether jobs run in cgroups, and if not, why.
	Isolation   bool
	IsolationOf string
	// LedgerPath is the controller's accounting database.
	LedgerPath string
	// CgroupRoot is this instance's cgroup parent (see CgroupRoot).
	CgroupRoot string
	// MetricsAddr is the controller's Prometheus listener, "" when off.
	MetricsAddr string
	// Clock is the lab's simulated time (nil: the host's clock).
	Clock *Clock

	log       *slog.Logger
	wrap      func(node string, d vendors.Driver) vendors.Driver
	templates map[string]presets.Template
	adapters  *adapterFinder
	choices   configChoices
	cfg       *config.Cluster
	key       auth.Key
	// ctlMu guards ctls, one per address of ctlAddrs (nil while stopped).
	ctlMu    sync.Mutex
	ctlAddrs []string
	ctls     []*controller.Controller
	mu       sync.Mutex
	nodes    map[string]*Node
	order    []string
}

// Up builds every node's simulated machine, starts the controller and the
// agents, and returns once every node has registered.
func Up(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Lab == nil {
		return nil, errors.New("cluster: no lab")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	shim := opts.Shim
	if len(shim) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("cluster: find the parity binary for the job supervisors: %w", err)
		}
		shim = agentshim.Command(exe, "agent", "shim")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	croot, err := CgroupRoot(opts.Lab.Name, dir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Lab: opts.Lab, Dir: dir, log: log, nodes: map[string]*Node{},
		CgroupRoot: croot, wrap: opts.WrapDriver, templates: opts.Templates, Clock: opts.Clock,
		choices: configChoices{preempt: opts.Preemption, noAccounts: opts.NoAccounts}, adapters: newAdapterFinder(dir)}
	users := append([]string{"root", "admin", "nobody"}, opts.Users...)
	if err := checkControllers(opts.Controllers); err != nil {
		return nil, err
	}
	if err := c.startControllers(ctx, max(opts.Controllers, 1), append([]string{"root", "admin"}, opts.Admins...), users, opts.MetricsAddr); err != nil {
		c.closeControllers()
		return nil, err
	}
	mgr := c.cgroups(opts.NoIsolation)
	for _, n := range opts.Lab.NodeList() {
		if err := c.startNode(ctx, n, mgr, shim); err != nil {
			c.Down(context.Background())
			return nil, err
		}
	}
	if err := c.waitRegistered(ctx); err != nil {
		c.Down(context.Background())
		return nil, err
	}
	return c, nil
}

// cgroups returns the job cgroup manager, or nil (with the reason kept)
// when isolation is off or unavailable.
func (c *Cluster) cgroups(off bool) *cgroup.Manager {
	if off {
		c.IsolationOf = "isolation disabled by the caller"
		return nil
	}
	mode, why := cgroup.Detect()
	mgr, err := cgroup.NewManager(mode)
	if err != nil {
		c.IsolationOf = fmt.Sprintf("cgroups unusable (%s): %v", why, err)
		c.log.Error("JOB ISOLATION UNAVAILABLE", "why", c.IsolationOf)
		return nil
	}
	if os.Geteuid() != 0 {
		c.IsolationOf = "not root: device nodes cannot be created"
		return nil
	}
	c.Isolation, c.IsolationOf = true, string(why)
	return mgr
}

func (c *Cluster) startNode(ctx context.Context, n labfile.Node, mgr *cgroup.Manager, shim []string) error {
	var now func() time.Time
	if c.Clock != nil {
		now = c.Clock.Now
	}
	m, _, err := buildNodeAt(ctx, c.Lab, c.Dir, n.Name, c.templates, nodeBuild{now: now, finder: c.adapters,
		log: c.log.With("daemon", "agent", "node", n.Name)})
	if err != nil {
		return err
	}
	spool := NodeSpool(c.Dir, n.Name)
	drivers := m.Drivers
	if c.wrap != nil {
		drivers = make([]vendors.Driver, len(m.Drivers))
		for i, d := range m.Drivers {
			drivers[i] = c.wrap(n.Name, d)
		}
	}
	found, err := vendors.DiscoverAll(ctx, drivers)
	if err != nil {
		m.Close()
		return fmt.Errorf("cluster: node %s: %w", n.Name, err)
	}
	if c.Isolation {
		if err := MakeDeviceNodes(found.Inventory); err != nil {
			m.Close()
			return err
		}
	}
	log := c.log.With("daemon", "agent", "node", n.Name)
	rt, err := launch.New(launch.Config{Node: n.Name, SpoolDir: spool, Cgroups: mgr, CgroupRoot: c.CgroupRoot,
		Shim: shim, KillWait: 2 * time.Second, Logger: log})
	if err != nil {
		m.Close()
		return err
	}
	tok, err := auth.Sign(c.key, auth.Claims{User: "agent:" + n.Name, Role: auth.RoleAgent, Node: n.Name, IssuedAt: time.Now()})
	if err != nil {
		return err
	}
	cl, err := client.Dial(ctx, c.Addr, tok)
	if err != nil {
		return err
	}
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var jumps <-chan struct{}
	if c.Clock != nil {
		jumps = c.Clock.Watch(actx)
	}
	ag, err := agent.New(agent.Config{Node: n.Name, Controller: cl, Runtime: rt, Drivers: found.Active,
		Inventory: found.Inventory, SampleInterval: SampleInterval, ClockJumps: jumps, Logger: log,
		RetryMin: 100 * time.Millisecond, RetryMax: time.Second})
	if err != nil {
		cancel()
		return err
	}
	node := &Node{Name: n.Name, Template: n.Template, Machine: m, Inventory: found.Inventory, Runtime: rt, cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := ag.Run(actx)
		cl.Close()
		node.done <- err
	}()
	c.mu.Lock()
	c.nodes[n.Name] = node
	c.order = append(c.order, n.Name)
	c.mu.Unlock()
	return nil
}

// waitRegistered polls the controller until every lab node is known and up.
func (c *Cluster) waitRegistered(ctx context.Context) error {
	return waitNodes(ctx, c.Client, len(c.order), func() error { return nil })
}

// FindAdapter finds an out-of-tree adapter's executable as the lab's
// nodes found theirs (presets.Options.FindAdapter), for rebuilt copies of
// its machines.
func (c *Cluster) FindAdapter(ctx context.Context, name string) (string, error) {
	return c.adapters.find(ctx, name)
}

// Token signs a token for user with role (auth.RoleUser when empty).
func (c *Cluster) Token(user string, role auth.Role) (string, error) {
	return signUser(c.key, user, role)
}

// signUser signs a user's token; root and admin are admins by default.
func signUser(key auth.Key, user string, role auth.Role) (string, error) {
	if role == "" {
		role = auth.RoleUser
		if user == "root" || user == "admin" {
			role = auth.RoleAdmin
		}
	}
	return auth.Sign(key, auth.Claims{User: user, Role: role, IssuedAt: time.Now()})
}

// Client dials the lab's controller as user.
func (c *Cluster) Client(ctx context.Context, user string) (*client.Client, error) {
	tok, err := c.Token(user, "")
	if err != nil {
		return nil, err
	}
	return client.Dial(ctx, c.Addr, tok)
}

// Node returns a running lab node by name.
func (c *Cluster) Node(name string) (*Node, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.nodes[name]
	return n, ok
}

// Nodes returns the lab nodes in lab order.
func (c *Cluster) Nodes() []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Node, 0, len(c.order))
	for _, name := range c.order {
		out = append(out, c.nodes[name])
	}
	return out
}

// Down stops every agent (cancelling their jobs first), the controller,
// and removes this instance's cgroups (killing what survived in them). The directory is left for inspection
// unless the caller removes it.
func (c *Cluster) Down(ctx context.Context) error {
	var errs []error
	for _, n := range c.Nodes() {
		for _, j := range n.Runtime.Running() {
			if err := n.Runtime.Cancel(ctx, j.JobID); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, n := range c.Nodes() {
		n.waitIdle(ctx)
		n.cancel()
		<-n.done
		errs = append(errs, n.Runtime.Close(), n.Machine.Close())
	}
	errs = append(errs, c.closeControllers())
	errs = append(errs, RemoveCgroups(c.CgroupRoot))
	errs = append(errs, RemoveRuntimeDir(c.Dir))
	return errors.Join(errs...)
}

// waitIdle gives cancelled jobs a moment to end so their groups go away.
func (n *Node) waitIdle(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for len(n.Runtime.Running()) > 0 {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
