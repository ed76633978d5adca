package conformance

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

// CPUVendor labels nodes without accelerators.
const CPUVendor = "cpu"

// JobUser is the user lab jobs run as.
const JobUser = "nobody"

// LabOptions say how to run a lab target.
type LabOptions struct {
	Lab *labfile.Lab
	// Dir holds the lab; empty makes a temporary directory that Close
	// removes unless Keep is set.
	Dir  string
	Keep bool
	// Shim is the job shim command (default: this executable's `agent shim`).
	Shim []string
	// Probe is the executable that serves `conform probe` (default: this
	// executable); it is copied where the job user can run it.
	Probe string
	// ProbeArgs follow the executable (default: conform probe).
	ProbeArgs []string
	// WrapDriver replaces every node's drivers, in the lab and in replicas
	// (tests break one vendor on purpose with it).
	WrapDriver func(node string, d vendors.Driver) vendors.Driver
	// Templates are node templates besides the built-in ones (see
	// cluster.Options), used by the lab and by replicas.
	Templates map[string]presets.Template
	Logger    *slog.Logger
	// Controllers is how many controllers the lab runs: 1 (0) or 3 or 5,
	// for the high-availability specs (ha.go).
	Controllers int
}

// LabTarget runs the suite against a lab started in this process.
type LabTarget struct {
	c       *cluster.Cluster
	opts    LabOptions
	dir     string
	temp    bool
	work    string
	probe   []string
	vendors []VendorTarget
	tree    *topology.SwitchTree
	hostCPU topology.CPUSet
	seeds   map[string]int64

	mu       sync.Mutex
	replicas int
}

var _ Target = (*LabTarget)(nil)
var _ SeriesSource = (*LabTarget)(nil)
var _ Clock = (*LabTarget)(nil)

// NewLab starts the lab and prepares it for the suite: a work directory
// the job user can write and a copy of the probe it can run.
func NewLab(ctx context.Context, opts LabOptions) (*LabTarget, error) {
	if opts.Lab == nil {
		return nil, fmt.Errorf("conformance: lab options: no lab")
	}
	t := &LabTarget{opts: opts, dir: opts.Dir, seeds: map[string]int64{}}
	if t.dir == "" {
		// A lab removed at the end lives on tmpfs where there is one (its
		// tens of thousands of files cost a disk seconds to remove); a
		// kept one on disk, where it outlives a reboot.
		parent := cluster.ScratchDir()
		if opts.Keep {
			parent = ""
		}
		d, err := os.MkdirTemp(parent, "parity-conform-")
		if err != nil {
			return nil, fmt.Errorf("conformance: lab directory: %w", err)
		}
		t.dir, t.temp = d, true
	}
	if err := t.prepareDir(); err != nil {
		t.removeDir()
		return nil, err
	}
	for i, n := range opts.Lab.NodeList() {
		t.seeds[n.Name] = opts.Lab.Seed + int64(i) // as labs/cluster seeds them
	}
	tree, err := opts.Lab.SwitchTree()
	if err != nil {
		t.removeDir()
		return nil, fmt.Errorf("conformance: lab %s: %w", opts.Lab.Name, err)
	}
	t.tree = tree
	// labs/cluster roots each instance's cgroups by its directory, so
	// parallel runs of the same lab keep out of each other's groups.
	c, err := cluster.Up(ctx, cluster.Options{Lab: opts.Lab, Dir: filepath.Join(t.dir, "lab"), Shim: opts.Shim,
		Logger: opts.Logger, WrapDriver: opts.WrapDriver, Templates: opts.Templates, Clock: cluster.NewClock(nil), Preemption: true,
		Controllers: opts.Controllers})
	if err != nil {
		t.removeDir()
		return nil, fmt.Errorf("conformance: start lab %s: %w", opts.Lab.Name, err)
	}
	t.c = c
	if err := chmodTree(c.Dir, t.dir); err != nil {
		t.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	t.vendors = labVendors(c)
	if mgr, err := cgroup.NewManager(firstMode()); err == nil {
		t.hostCPU, _ = cgroup.HostCPUs(mgr)
	} else {
		t.hostCPU, _ = cgroup.HostCPUs(nil)
	}
	return t, nil
}

func firstMode() cgroup.Mode { m, _ := cgroup.Detect(); return m }

// prepareDir makes the lab directory traversable and its work directory
// writable by the job user, and installs the probe.
func (t *LabTarget) prepareDir() error {
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return fmt.Errorf("conformance: lab directory %s: %w", t.dir, err)
	}
	abs, err := filepath.Abs(t.dir)
	if err != nil {
		return err
	}
	t.dir = abs
	if err := os.Chmod(t.dir, 0o755); err != nil {
		return fmt.Errorf("conformance: lab directory %s: %w", t.dir, err)
	}
	for p := filepath.Dir(t.dir); ; p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil && st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("conformance: lab directory %s: parent %s is not searchable by others (mode %v); jobs run as %s", t.dir, p, st.Mode().Perm(), JobUser)
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	t.work = filepath.Join(t.dir, "work")
	if err := os.MkdirAll(t.work, 0o777); err != nil {
		return err
	}
	if err := os.Chmod(t.work, 0o1777); err != nil {
		return err
	}
	exe := t.opts.Probe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("conformance: find the probe executable: %w", err)
		}
	}
	bin := filepath.Join(t.dir, "bin", "parity-probe")
	if err := copyExecutable(exe, bin); err != nil {
		return err
	}
	args := t.opts.ProbeArgs
	if len(args) == 0 {
		args = []string{"conform", "probe"}
	}
	t.probe = append([]string{bin}, args...)
	return nil
}

func copyExecutable(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("conformance: copy probe %s: %w", from, err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return fmt.Errorf("conformance: install probe %s: %w", to, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("conformance: install probe %s: %w", to, err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(to, 0o755)
}

// chmodTree makes every directory from top down to dir searchable by others.
func chmodTree(dir, top string) error {
	for p := dir; strings.HasPrefix(p, top) && len(p) >= len(top); p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if err := os.Chmod(p, st.Mode().Perm()|0o055); err != nil {
			return fmt.Errorf("conformance: make %s searchable: %w", p, err)
		}
	}
	return nil
}

// Cluster is the running lab.
func (t *LabTarget) Cluster() *cluster.Cluster { return t.c }

// Dir is the directory holding the lab.
func (t *LabTarget) Dir() string { return t.dir }

func (t *LabTarget) Name() string            { return "lab:" + t.opts.Lab.Name }
func (t *LabTarget) Lab() string             { return t.opts.Lab.Name }
func (t *LabTarget) Vendors() []VendorTarget { return slices.Clone(t.vendors) }
func (t *LabTarget) WorkDir() (string, error) {
	return t.work, nil
}
func (t *LabTarget) ProbeCommand() []string    { return slices.Clone(t.probe) }
func (t *LabTarget) Isolation() (bool, string) { return t.c.Isolation, t.c.IsolationOf }
func (t *LabTarget) Ledger() string {
	return t.c.LeaderLedger(context.Background(), 10*time.Second) // the leader's, with several controllers
}

// Client dials the lab's controller; "" is the job user.
func (t *LabTarget) Client(ctx context.Context, user string) (*client.Client, error) {
	if user == "" {
		user = JobUser
	}
	return t.c.Client(ctx, user)
}

func (t *LabTarget) node(name string) (*cluster.Node, error) {
	n, ok := t.c.Node(name)
	if !ok {
		return nil, fmt.Errorf("conformance: lab %s has no node %q", t.opts.Lab.Name, name)
	}
	return n, nil
}

// Now is the lab's simulated time (its controller's clock).
func (t *LabTarget) Now() time.Time { return t.c.Clock.Now() }

// Advance moves the lab's clock forward by d (see cluster.Cluster.Advance).
func (t *LabTarget) Advance(ctx context.Context, d time.Duration) error {
	return t.c.Advance(ctx, d)
}

// Step is how often the lab's agents sample (cluster.SampleInterval).
func (t *LabTarget) Step() time.Duration { return cluster.SampleInterval }

// Inventory is what the node's drivers discovered when the lab started.
func (t *LabTarget) Inventory(node string) (gres.Inventory, error) {
	n, err := t.node(node)
	if err != nil {
		return gres.Inventory{}, err
	}
	return n.Inventory, nil
}

// SwitchTree is the lab file's switch tree.
func (t *LabTarget) SwitchTree() (*topology.SwitchTree, error) {
	if t.tree == nil {
		return nil, fmt.Errorf("%w: lab %s defines no switches", ErrNotSupported, t.opts.Lab.Name)
	}
	return t.tree, nil
}

// JobCPUs folds the allocation onto the host's CPUs as the lab's agents do.
func (t *LabTarget) JobCPUs(_ string, alloc topology.CPUSet) (topology.CPUSet, error) {
	return cgroup.MapCPUs(alloc, t.hostCPU).Host, nil
}

// MayDisturb: every lab node may be drained, requeued and faulted.
func (t *LabTarget) MayDisturb(string) (bool, string) { return true, "" }

// Faults returns the node's simulated fault hooks.
func (t *LabTarget) Faults(node string) (presets.Faults, error) {
	n, err := t.node(node)
	if err != nil {
		return nil, err
	}
	if n.Machine.Faults == nil {
		return nil, fmt.Errorf("%w: node %s has no fault hooks (no accelerators, or an adapter the lab cannot fault)", ErrNotSupported, node)
	}
	return n.Machine.Faults, nil
}

// Replica builds node's template again with the node's seed in a fresh
// directory: what an agent restart on the same hardware would discover.
func (t *LabTarget) Replica(ctx context.Context, node string) (*presets.Machine, []vendors.Driver, error) {
	n, err := t.node(node)
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := cluster.LookupTemplate(n.Template, t.opts.Templates)
	if err != nil {
		return nil, nil, err
	}
	root, err := t.replicaRoot(node)
	if err != nil {
		return nil, nil, err
	}
	// Built as labs/cluster builds its nodes (same seed), but polling for
	// faults more often: only the driver contract's checks use a replica,
	// and its health check waits for the first poll after a fault.
	m, err := cluster.BuildMachine(ctx, tmpl, presets.Options{Root: root, Seed: t.seeds[node], Hostname: node, HealthPoll: replicaHealthPoll,
		FindAdapter: t.c.FindAdapter}, t.opts.Logger)
	if err != nil {
		return nil, nil, err
	}
	return m, t.wrapped(node, m.Drivers), nil
}

// replicaHealthPoll is how often a replica's polling drivers read their
// fault counters: a tenth of a lab node's period.
const replicaHealthPoll = cluster.SampleInterval / 10

// replicaRoot makes a fresh directory for a rebuilt copy of a node.
func (t *LabTarget) replicaRoot(name string) (string, error) {
	t.mu.Lock()
	t.replicas++
	root := filepath.Join(t.dir, "replicas", fmt.Sprintf("%s-%d", name, t.replicas))
	t.mu.Unlock()
	return root, os.MkdirAll(root, 0o755)
}

// wrapped is a rebuilt node's drivers as the lab's WrapDriver gives them.
func (t *LabTarget) wrapped(node string, ds []vendors.Driver) []vendors.Driver {
	drivers := slices.Clone(ds)
	if t.opts.WrapDriver != nil {
		for i, d := range drivers {
			drivers[i] = t.opts.WrapDriver(node, d)
		}
	}
	return drivers
}

// DeviceFileMajor stats a device file of the lab (all nodes share this host).
func (t *LabTarget) DeviceFileMajor(_, path string) (uint32, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, fmt.Errorf("conformance: stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return 0, fmt.Errorf("%w: %s is not a character device (the lab made no device nodes: %s)", ErrNotSupported, path, t.c.IsolationOf)
	}
	return unix.Major(st.Rdev), nil
}

// Close stops the lab and removes its directory unless kept.
func (t *LabTarget) Close(ctx context.Context) error {
	var err error
	if t.c != nil {
		err = t.c.Down(ctx)
	}
	t.removeDir()
	return err
}

func (t *LabTarget) removeDir() {
	if t.temp && !t.opts.Keep {
		os.RemoveAll(t.dir)
	}
}

// StartSeries samples every GPU of the lab once a second until stop is
// called, with the controller's view of each GPU (in service or drained).
func (t *LabTarget) StartSeries(ctx context.Context) func() []reports.GPUSeries {
	return startSampler(ctx, t, labSamplers(t.c), defaultSampleEvery)
}

func labSamplers(c *cluster.Cluster) []nodeSampler {
	var out []nodeSampler
	for _, n := range c.Nodes() {
		if len(n.Inventory.Devices) == 0 {
			continue
		}
		ns := nodeSampler{node: n.Name, inv: n.Inventory}
		for _, d := range n.Machine.Drivers {
			if s, ok := d.(vendors.Sampler); ok {
				ns.samplers = append(ns.samplers, s)
			}
		}
		out = append(out, ns)
	}
	return out
}
