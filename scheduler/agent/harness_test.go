package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/scheduler/agent/shim"
	"github.com/parityhpc/parity/scheduler/agent/telemetry"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/scheduler/store"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/nvidia"
)

const shimArg = "__parity_shim__"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == shimArg {
		os.Exit(shim.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

const waitTimeout = 60 * time.Second

const clusterYAML = `
cluster: lab
admins: [root]
partitions:
  - name: gpu
    nodes: n1
    default: true
    maxTime: "1:00:00"
    defaultTime: "0:10:00"
nodes:
  - names: n1
    gpus: 8
    gpuType: h100
accounts:
  - name: physics
    users: [nobody]
heartbeatInterval: 1s
nodeDownTimeout: 1m
`

// cluster is a real controller and a real agent for node n1, a simulated
// DGX H100 whose device nodes carry the real numbers.
type cluster struct {
	t       *testing.T
	ctrl    *controller.Controller
	clock   *skewClock // the controller's
	ends    chan *pb.Job
	rt      *launch.Runtime
	rtCfg   launch.Config
	stop    func()
	inv     gres.Inventory
	drivers []vendors.Driver
	logger  *slog.Logger
	devDir  string
	work    string
	ledger  string // the controller's accounting ledger
	sim     *nvmlsim.Machine
	gpus    []string // UUIDs in index order
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: the agent needs root to run jobs as their owner")
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg, err := config.Parse("lab.yaml", []byte(clusterYAML))
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, ends: make(chan *pb.Job, 16), clock: &skewClock{}}
	base := t.TempDir()
	for d := base; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o711)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.ledger = filepath.Join(base, "accounting.db")
	led, err := store.OpenSQLite(ctx, c.ledger, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.ctrl, err = controller.New(controller.Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: filepath.Join(base, "ctl"),
		MetricsAddr: "off", Logger: quiet, OnJobEnd: func(j *pb.Job) { c.ends <- j }, Ledger: led, Now: c.clock.Now})
	if err != nil {
		led.Close()
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			cancel()
		}
	}()
	if err := c.ctrl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.ctrl.Close() })

	m, err := nvmlsim.New(nvmlsim.Config{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	c.sim = m
	root := filepath.Join(base, "hw")
	if err := m.WriteRoot(root); err != nil {
		t.Fatal(err)
	}
	c.devDir = filepath.Join(root, "dev")
	for i := range 8 {
		mknod(t, filepath.Join(c.devDir, fmt.Sprintf("nvidia%d", i)), 195, uint32(i))
	}
	mknod(t, filepath.Join(c.devDir, "nvidiactl"), 195, 255)
	drv := nvidia.New(m.NVML(), nvidia.WithRoot(root), nvidia.WithLogger(quiet))
	found, err := vendors.DiscoverAll(ctx, []vendors.Driver{drv})
	if err != nil {
		t.Fatal(err)
	}
	inv := found.Inventory
	layout := m.Config().Host
	all := topology.CPURange(0, layout.CPUs()-1)
	inv.Host = &gres.Host{Hostname: "n1", CPUs: all, Cores: layout.Sockets * layout.CoresPerSocket, Sockets: layout.Sockets,
		MemoryBytes: layout.MemoryBytes, NUMA: layout.NUMA()}
	for _, d := range inv.Devices {
		c.gpus = append(c.gpus, d.UUID)
	}

	var mgr *cgroup.Manager
	if mode, _ := cgroup.Detect(); mode != cgroup.Unavailable {
		mgr, _ = cgroup.NewManager(mode)
	}
	exe, _ := os.Executable()
	// One root per test (its temporary directory's name): job ids restart
	// at 1 in every test, so a group one failed test leaves behind must not
	// meet the next test's job of the same id.
	cgRoot := "/parity-agenttest-" + filepath.Base(filepath.Dir(base))
	c.rtCfg = launch.Config{Node: "n1", SpoolDir: filepath.Join(base, "spool"), Cgroups: mgr, CgroupRoot: cgRoot,
		Shim: []string{exe, shimArg}, KillWait: time.Second, Logger: logger}
	c.work = filepath.Join(base, "work")
	os.Mkdir(c.work, 0o777)
	os.Chmod(c.work, 0o777)
	c.inv, c.drivers, c.logger = inv, found.Active, logger
	t.Cleanup(func() {
		cancel()
		c.stopAgent()
		for _, n := range []string{"devices", "memory", "cpuset", "freezer", "cpuacct", "pids"} {
			removeGroups(filepath.Join("/sys/fs/cgroup", n, cgRoot))
		}
	})
	c.startAgent()
	return c
}

// startAgent starts the node's runtime and agent, as a restarted agent
// process would: a new runtime over the same spool.
func (c *cluster) startAgent() {
	c.t.Helper()
	rt, err := launch.New(c.rtCfg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.rt = rt
	tok, err := auth.Sign(c.ctrl.Key(), auth.Claims{User: "n1", Role: auth.RoleAgent, Node: "n1", IssuedAt: time.Now()})
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cl, err := client.Dial(ctx, c.ctrl.Addr(), tok)
	if err != nil {
		c.t.Fatal(err)
	}
	col := telemetry.NewCollector(c.inv, telemetry.CollectorOptions{Hostname: "n1", Holders: rt.Holders})
	ag, err := New(Config{Node: "n1", Controller: cl, Runtime: rt, Drivers: c.drivers, Inventory: c.inv, Collector: col,
		Version: "test", Logger: c.logger, RetryMin: 50 * time.Millisecond, RetryMax: time.Second,
		SampleInterval: 100 * time.Millisecond})
	if err != nil {
		c.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ag.Run(ctx) }()
	c.stop = func() {
		cancel()
		<-done
		cl.Close()
		rt.Close()
	}
}

// skewClock is the real clock moved ahead by what tests skip (a node's
// silence past its timeout) while everything else still takes real time.
type skewClock struct {
	mu   sync.Mutex
	skew time.Duration
}

func (s *skewClock) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().Add(s.skew)
}

func (s *skewClock) Advance(d time.Duration) {
	s.mu.Lock()
	s.skew += d
	s.mu.Unlock()
}

func (c *cluster) stopAgent() {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
}

func mknod(t *testing.T, path string, major, minor uint32) {
	t.Helper()
	unix.Unlink(path)
	if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(major, minor))); err != nil {
		t.Fatal(err)
	}
	unix.Chmod(path, 0o666)
}

// user is a client acting as nobody.
func (c *cluster) user() *client.Client {
	c.t.Helper()
	tok, err := auth.Sign(c.ctrl.Key(), auth.Claims{User: "nobody", Role: auth.RoleUser, IssuedAt: time.Now()})
	if err != nil {
		c.t.Fatal(err)
	}
	cl, err := client.Dial(context.Background(), c.ctrl.Addr(), tok)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { cl.Close() })
	return cl
}

func (c *cluster) submit(spec *pb.JobSpec) uint64 {
	c.t.Helper()
	id, err := c.user().Submit(context.Background(), spec)
	if err != nil {
		c.t.Fatalf("submit: %v", err)
	}
	return id
}

func (c *cluster) waitEnd(id uint64) *pb.Job {
	c.t.Helper()
	deadline := time.After(waitTimeout)
	for {
		select {
		case j := <-c.ends:
			if j.GetId() == id {
				return j
			}
		case <-deadline:
			c.t.Fatalf("job %d did not end within %s", id, waitTimeout)
		}
	}
}

func gpuSpec(t *testing.T, script string, gpus int) *pb.JobSpec {
	t.Helper()
	per, err := gres.ParseGRES(fmt.Sprintf("gpu:h100:%d", gpus))
	if err != nil {
		t.Fatal(err)
	}
	return &pb.JobSpec{Name: "probe", Account: "physics", Script: "#!/bin/sh\n" + script,
		Gres: api.GRESToProto(gres.JobRequest{PerNode: per}), MemPerNodeMb: 256, Ntasks: 1, TimeLimitSeconds: 600,
		Env: map[string]string{"PATH": "/usr/bin:/bin"}}
}

// waitSettled waits until the node runs nothing and keeps no unreported
// end: the controller settles a job as soon as it hears of it, a moment
// before the agent drops its record.
func (c *cluster) waitSettled() {
	c.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ended, err := c.rt.Ended()
		if err == nil && len(ended) == 0 && len(c.rt.Running()) == 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node not settled: running %+v, ended %+v, %v", c.rt.Running(), ended, err)
		}
		time.Sleep(20 * time.Millisecond) // polling another component's progress, bounded by the deadline
	}
}

// An agent restarted while its job runs re-attaches, and the job's real
// exit code reaches the controller; a job that ends while no agent runs is
// reported before the node registers again, so it is not lost with it.
// jobStatusWritten waits until the node's supervisor has recorded how job
// id ended (its status file is renamed into place once, at the end).
func (c *cluster) jobStatusWritten(id uint64) {
	c.t.Helper()
	path := filepath.Join(c.rtCfg.SpoolDir, fmt.Sprintf("job_%d", id), "status.json")
	deadline := time.Now().Add(waitTimeout)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("job %d: no status file within %s", id, waitTimeout)
		}
		time.Sleep(20 * time.Millisecond) // polling another process's progress, bounded by the deadline
	}
}

// removeGroups removes a cgroup directory tree, deepest first; a group
// that still holds processes stays.
func removeGroups(root string) {
	var dirs []string
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i])
	}
}
