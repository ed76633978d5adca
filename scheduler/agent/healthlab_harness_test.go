package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/labs/sim/hostsim"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/scheduler/store"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/builtin"
	"github.com/parityhpc/parity/vendors/cpu"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// The health lab: a real controller and one real agent per node, each
// agent over the real vendor driver of a simulated machine — an 8×H100
// node (h1) and an 8×MI300X node (m1) — so faults travel the same driver
// code paths as on real hardware. The policy is quick (two clean samples
// to recover; one automatic resume before a device is held) and
// reclamation acts for real on a seconds-long ladder; partition debug is
// exempt from it.
const healthLabYAML = `
cluster: healthlab
admins: [root]
partitions:
  - name: gpu
    nodes: h1,m1
    default: true
    maxTime: "1:00:00"
  - name: debug
    nodes: h1,m1
    maxTime: "1:00:00"
nodes:
  - names: h1,m1
accounts:
  - name: physics
    users: [nobody]
heartbeatInterval: 1s
nodeDownTimeout: 1m
scheduler:
  interval: 1s
health:
  recoveryPasses: 2
  flapLimit: 1
reclamation:
  dryRun: false
  idleFor: 3s
  grace: 2s
  minRuntime: 0s
  maxSampleGap: 5s
  exemptPartitions: [debug]
`

const (
	labSampleInterval = time.Second
	labWait           = 60 * time.Second
)

// labNode is one lab node and the hooks that change its simulated hardware.
type labNode struct {
	name, gpuType string
	root          string
	inv           gres.Inventory
	// fatal raises a fatal GPU fault that leaves the GPU needing a reset
	// (its diagnosis fails until repair); util sets a GPU's busy percentage.
	fatal  func(ctx context.Context, idx int) error
	repair func(idx int) error
	util   func(idx, pct int) error
}

type healthLab struct {
	t      *testing.T
	ctrl   *controller.Controller
	ledger string
	work   string
	nodes  map[string]*labNode
	admin  *client.Client
}

// startHealthLab builds the machines, the controller and the agents and
// waits until both nodes registered.
func startHealthLab(t *testing.T) *healthLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: the agent needs root to run jobs as their owner")
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base := t.TempDir()
	for d := base; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o711)
	}
	cfg, err := config.Parse("healthlab.yaml", []byte(healthLabYAML))
	if err != nil {
		t.Fatal(err)
	}
	lab := &healthLab{t: t, ledger: filepath.Join(base, "accounting.db"), work: filepath.Join(base, "work"), nodes: map[string]*labNode{}}
	os.Mkdir(lab.work, 0o777)
	os.Chmod(lab.work, 0o777)
	db, err := store.OpenSQLite(ctx, lab.ledger, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lab.ctrl, err = controller.New(controller.Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: filepath.Join(base, "ctl"),
		MetricsAddr: "off", Logger: quiet, Ledger: db})
	if err != nil {
		t.Fatal(err)
	}
	if err := lab.ctrl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lab.ctrl.Close() })
	lab.admin = lab.dial("root", auth.RoleAdmin, "")
	for i, n := range []struct{ name, template, gpuType string }{{"h1", "dgx-h100", "h100"}, {"m1", "mi300x", "mi300x"}} {
		lab.startNode(ctx, n.name, n.template, n.gpuType, int64(40+i), base, quiet)
	}
	lab.waitFor("both nodes registered", func() bool {
		nodes, err := lab.admin.ListNodes(ctx, nil)
		return err == nil && len(nodes) == 2 && nodes[0].GetRegistered() && nodes[1].GetRegistered()
	})
	return lab
}

func (l *healthLab) startNode(ctx context.Context, name, template, gpuType string, seed int64, base string, log *slog.Logger) {
	t := l.t
	root := filepath.Join(base, name, "root")
	os.MkdirAll(root, 0o755)
	n := &labNode{name: name, gpuType: gpuType, root: root}
	var drivers []vendors.Driver
	switch template {
	case "dgx-h100":
		drivers = n.buildNVIDIA(t, seed, log)
	default:
		drivers = n.buildPreset(ctx, t, template, seed)
	}
	t.Cleanup(func() { builtin.Close(drivers) })
	found, err := vendors.DiscoverAll(ctx, drivers)
	if err != nil {
		t.Fatal(err)
	}
	n.inv = found.Inventory
	rt, err := launch.New(launch.Config{Node: name, SpoolDir: filepath.Join(base, name, "spool"), Shim: []string{mustExe(t), shimArg},
		KillWait: time.Second, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	cl := l.dial(name, auth.RoleAgent, name)
	ag, err := New(Config{Node: name, Controller: cl, Runtime: rt, Drivers: found.Active, Inventory: found.Inventory,
		SampleInterval: labSampleInterval, Logger: log, RetryMin: 50 * time.Millisecond, RetryMax: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	actx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ag.Run(actx) }()
	t.Cleanup(func() {
		for _, j := range rt.Running() {
			rt.Cancel(context.Background(), j.JobID)
		}
		stop()
		<-done
		rt.Close()
	})
	l.nodes[name] = n
}

// buildPreset builds a named machine of labs/presets with a fast health
// poll; its fatal fault ("fatal": an uncorrectable UMC error on AMD) stays
// in the sysfs RAS counters until repair clears them, as a GPU reset does.
func (n *labNode) buildPreset(ctx context.Context, t *testing.T, template string, seed int64) []vendors.Driver {
	tmpl, err := presets.Lookup(template)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tmpl.Build(ctx, presets.Options{Root: n.root, Seed: seed, Hostname: n.name, HealthPoll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	n.fatal = func(ctx context.Context, idx int) error {
		if err := m.Faults.WaitWatched(ctx, idx); err != nil {
			return err
		}
		return m.Faults.Inject(idx, "fatal")
	}
	n.util = m.Faults.SetUtilization
	n.repair = func(idx int) error {
		d := n.inv.Devices[slices.IndexFunc(n.inv.Devices, func(d gres.Device) bool { return d.Index == idx && d.Parent == "" })]
		p := filepath.Join(n.root, "sys/bus/pci/devices", d.PCIBusID, "ras", "umc_err_count")
		return os.WriteFile(p, []byte("ue: 0\nce: 0\n"), 0o644)
	}
	return m.Drivers
}

// buildNVIDIA builds the dgx-h100 machine from its parts (a simulated
// host, a go-nvml mock server, the real NVIDIA and CPU drivers) to reach
// the mock's row remapper: an XID 79 leaves the GPU with a row remap
// pending, so its diagnosis fails until the GPU is reset (repair).
func (n *labNode) buildNVIDIA(t *testing.T, seed int64, log *slog.Logger) []vendors.Driver {
	tmpl, err := presets.Lookup("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	layout := tmpl.Layout
	if err := hostsim.Generate(n.root, layout, n.name); err != nil {
		t.Fatal(err)
	}
	m, err := nvmlsim.New(nvmlsim.Config{Model: "h100", GPUs: 8, GPUNUMA: []int{0, 0, 0, 0, 1, 1, 1, 1}, NVSwitch: true, Seed: seed, Host: layout})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WriteRoot(n.root); err != nil {
		t.Fatal(err)
	}
	n.fatal = func(ctx context.Context, idx int) error {
		if err := m.WaitRegistered(ctx, idx, nvml.EventTypeXidCriticalError); err != nil {
			return err
		}
		if err := m.SetRemappedRows(idx, true, false); err != nil {
			return err
		}
		return m.InjectXID(idx, 79)
	}
	n.repair = func(idx int) error { return m.SetRemappedRows(idx, false, false) }
	n.util = func(idx, pct int) error { return m.SetUtilization(idx, uint32(pct)) }
	return []vendors.Driver{nvidia.New(m.NVML(), nvidia.WithRoot(n.root), nvidia.WithHostCPUs(layout.CPUs()), nvidia.WithLogger(log)),
		cpu.New(cpu.WithChroot(n.root), cpu.WithHostname(n.name))}
}

func mustExe(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func (l *healthLab) dial(user string, role auth.Role, node string) *client.Client {
	l.t.Helper()
	tok, err := auth.Sign(l.ctrl.Key(), auth.Claims{User: user, Role: role, Node: node, IssuedAt: time.Now()})
	if err != nil {
		l.t.Fatal(err)
	}
	cl, err := client.Dial(context.Background(), l.ctrl.Addr(), tok)
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { cl.Close() })
	return cl
}

// waitFor polls an observable condition until it holds or labWait passes.
func (l *healthLab) waitFor(what string, ok func() bool) {
	l.t.Helper()
	deadline := time.Now().Add(labWait)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		if time.Now().After(deadline) {
			l.t.Fatalf("timed out after %v waiting for %s", labWait, what)
		}
		<-tick.C
	}
}

// submit runs a sleeping one-GPU job of the node's type on the node.
func (l *healthLab) submit(node, partition, name string) uint64 {
	l.t.Helper()
	n := l.nodes[node]
	per, err := gres.ParseGRES(fmt.Sprintf("gpu:%s:1", n.gpuType))
	if err != nil {
		l.t.Fatal(err)
	}
	spec := &pb.JobSpec{Name: name, Account: "physics", Partition: partition, Script: "#!/bin/sh\nsleep 300\n",
		Gres: api.GRESToProto(gres.JobRequest{PerNode: per}), MemPerNodeMb: 256, Ntasks: 1, TimeLimitSeconds: 600,
		Nodelist: []string{node}, Workdir: l.work, Output: "/dev/null", Env: map[string]string{"PATH": "/usr/bin:/bin"}}
	id, err := l.dial("nobody", auth.RoleUser, "").Submit(context.Background(), spec)
	if err != nil {
		l.t.Fatalf("submit %s: %v", name, err)
	}
	return id
}

func (l *healthLab) job(id uint64) *pb.Job {
	l.t.Helper()
	j, err := l.admin.GetJob(context.Background(), id, false)
	if err != nil {
		l.t.Fatal(err)
	}
	return j
}

// running waits until job id runs after at least restarts requeues and
// returns its GPU.
func (l *healthLab) running(id uint64, restarts int32) string {
	l.t.Helper()
	var gpu string
	l.waitFor(fmt.Sprintf("job %d running (restarts ≥ %d)", id, restarts), func() bool {
		j := l.job(id)
		if j.GetState() != "RUNNING" || j.GetRestarts() < restarts || len(j.GetAlloc()) != 1 || len(j.GetAlloc()[0].GetDevices()) != 1 {
			return false
		}
		gpu = j.GetAlloc()[0].GetDevices()[0]
		return true
	})
	return gpu
}

func (l *healthLab) gpu(node, uuid string) *pb.GPU {
	l.t.Helper()
	n, err := l.admin.GetNode(context.Background(), node)
	if err != nil {
		l.t.Fatal(err)
	}
	for _, g := range n.GetGpus() {
		if g.GetUuid() == uuid {
			return g
		}
	}
	l.t.Fatalf("node %s has no GPU %s", node, uuid)
	return nil
}

func (l *healthLab) events(node string, kinds ...string) []*pb.Event {
	l.t.Helper()
	evs, err := l.admin.Events(context.Background(), &pb.EventsRequest{Node: node, Kinds: kinds})
	if err != nil {
		l.t.Fatal(err)
	}
	return evs
}

// index is a device's local index on its node.
func (n *labNode) index(uuid string) int {
	i := slices.IndexFunc(n.inv.Devices, func(d gres.Device) bool { return d.UUID == uuid })
	return n.inv.Devices[i].Index
}
