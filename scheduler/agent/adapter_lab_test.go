package agent

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/scheduler/store"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/builtin"
	"github.com/parityhpc/parity/vendors/plugin"
)

// One node (p1) with the real NVIDIA driver over a simulated 8×H100
// machine and an out-of-tree adapter with 4 devices on a unix socket.
const adapterLabYAML = `
cluster: adapterlab
admins: [root]
partitions:
  - name: gpu
    nodes: p1
    default: true
    maxTime: "1:00:00"
nodes:
  - names: p1
accounts:
  - name: physics
    users: [nobody]
heartbeatInterval: 1s
nodeDownTimeout: 1m
scheduler:
  interval: 1s
health:
  recoveryPasses: 2
`

// TestAdapterCrashLeavesTheNodeRunning: through a real controller and
// agent, an adapter's crash drains its four devices (and requeues the job
// on one of them) while the node, its H100s and the job running on one
// stay as they were (four devices failing together with their adapter are
// not four hardware faults: the default policy's limit of three failed
// GPUs per node does not drain it); when the adapter is back its devices resume through
// the health policy and the requeued job runs again.
func TestAdapterCrashLeavesTheNodeRunning(t *testing.T) {
	al := startAdapterLab(t, true, "")
	lab, ctx, found, serve := al.lab, al.ctx, al.found, al.serve
	crash := al.stop

	onH100 := lab.submit("p1", "gpu", "on-h100")
	h100 := lab.running(onH100, 0)
	lab.nodes["p1"].gpuType = "a1"
	onAcme := lab.submit("p1", "gpu", "on-acme")
	acme := lab.running(onAcme, 0)
	if !strings.HasPrefix(acme, "ACME-") {
		t.Fatalf("the a1 job runs on %s", acme)
	}
	// RUNNING is the controller's word once it sends the launch; the crash
	// must come after the agent's launch asked the adapter for the device,
	// or it is a launch that failed (requeued held, as Slurm holds one),
	// not a running job losing its adapter.
	lab.waitFor("the adapter prepared the a1 job's device", func() bool {
		return slices.Equal(al.accel.preparedFor(strconv.FormatUint(onAcme, 10)), []string{acme})
	})

	crash()
	acmes := []string{"ACME-0", "ACME-1", "ACME-2", "ACME-3"}
	lab.waitFor("the adapter's devices drained", func() bool {
		for _, u := range acmes {
			if !strings.Contains(lab.gpu("p1", u).GetDrainReason(), "adapter gone") {
				return false
			}
		}
		return true
	})
	t.Logf("drain reason: %s", lab.gpu("p1", acme).GetDrainReason())
	if j := lab.job(onH100); j.GetState() != "RUNNING" || j.GetRestarts() != 0 || j.GetAlloc()[0].GetDevices()[0] != h100 {
		t.Errorf("the H100 job after the adapter's crash: %s, restarts %d", j.GetState(), j.GetRestarts())
	}
	for _, d := range found.Inventory.Devices {
		if g := lab.gpu("p1", d.UUID); g.GetState() == "drain" || g.GetDrainReason() != "" {
			t.Errorf("H100 %s touched by the adapter's crash: %v", d.UUID, g)
		}
	}
	nd, err := lab.admin.GetNode(ctx, "p1")
	if err != nil || slices.Contains(nd.GetFlags(), "DRAIN") {
		t.Errorf("node after the adapter's crash: %v, %v", nd.GetFlags(), err)
	}

	crash = serve()
	t.Cleanup(crash)
	defer func() {
		if t.Failed() {
			for _, u := range acmes {
				t.Logf("%s: %v", u, lab.gpu("p1", u))
			}
			t.Logf("job %d: %v", onAcme, lab.job(onAcme))
			for _, ev := range lab.events("p1") {
				t.Logf("event %s %v", ev.GetKind(), ev.GetFields())
			}
		}
	}()
	lab.waitFor("the adapter's devices resumed", func() bool {
		for _, u := range acmes {
			if g := lab.gpu("p1", u); g.GetDrainReason() != "" || g.GetHealth() != "healthy" {
				return false
			}
		}
		return true
	})
	if again := lab.running(onAcme, 1); !strings.HasPrefix(again, "ACME-") {
		t.Errorf("the requeued job runs on %s", again)
	}
	if j := lab.job(onH100); j.GetState() != "RUNNING" || j.GetRestarts() != 0 {
		t.Errorf("the H100 job at the end: %s, restarts %d", j.GetState(), j.GetRestarts())
	}
}

// adapterLab is one node (p1) run by a real agent and controller: the
// real NVIDIA driver over a simulated 8×H100 machine and an out-of-tree
// adapter with 4 devices on a unix socket, supervised by an Adapter.
type adapterLab struct {
	lab   *healthLab
	ctx   context.Context
	found vendors.Discovered // the in-tree drivers' devices
	accel *fakeAccel
	// serve starts the adapter's server and returns its stop; stop ends
	// the one started by startAdapterLab (a no-op when not served).
	serve func() func()
	stop  func()
}

// startAdapterLab starts the lab with the adapter served at the agent's
// start or not, its inventory kept in stateFile ("" for none), and
// returns once the node has registered.
func startAdapterLab(t *testing.T, served bool, stateFile string, policy ...func(*PluginPolicy)) *adapterLab {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped in -short mode: runs a one-node lab for some seconds")
	}
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
	cfg, err := config.Parse("adapterlab.yaml", []byte(adapterLabYAML))
	if err != nil {
		t.Fatal(err)
	}
	lab := &healthLab{t: t, work: filepath.Join(base, "work"), nodes: map[string]*labNode{}}
	os.Mkdir(lab.work, 0o777)
	os.Chmod(lab.work, 0o777)
	db, err := store.OpenSQLite(ctx, filepath.Join(base, "accounting.db"), store.Options{})
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

	root := filepath.Join(base, "p1", "root")
	os.MkdirAll(root, 0o755)
	n := &labNode{name: "p1", gpuType: "h100", root: root}
	inTree := n.buildNVIDIA(t, 7, quiet)
	t.Cleanup(func() { builtin.Close(inTree) })
	found, err := vendors.DiscoverAll(ctx, inTree)
	if err != nil {
		t.Fatal(err)
	}

	accel := &fakeAccel{inv: acmeInventory(4)}
	sock := filepath.Join(base, "acme.sock")
	serve := func() func() {
		sctx, stop := context.WithCancel(ctx)
		ready, done := make(chan struct{}), make(chan error, 1)
		go func() {
			done <- plugin.Serve(sctx, sock, accel, plugin.WithServerLogger(quiet), plugin.WithReady(func() { close(ready) }),
				plugin.WithStopGrace(100*time.Millisecond))
		}()
		<-ready
		return func() { stop(); <-done }
	}
	al := &adapterLab{lab: lab, ctx: ctx, found: found, accel: accel, serve: serve, stop: func() {}}
	if served {
		al.stop = serve()
	}
	taken := map[string]string{}
	for _, d := range found.Inventory.Devices {
		taken[d.UUID] = d.Vendor
	}
	pol := PluginPolicy{Target: "unix://" + sock, CallTimeout: time.Second, ProbeInterval: 200 * time.Millisecond,
		ReconnectMin: 100 * time.Millisecond, ReconnectMax: 400 * time.Millisecond}
	for _, f := range policy {
		f(&pol)
	}
	ad, err := NewAdapter(AdapterConfig{Logger: quiet, Host: found.Inventory.Host, Taken: taken, StateFile: stateFile,
		Policy: pol,
		Dial: func(ctx context.Context, p PluginPolicy) (vendors.Driver, error) {
			return plugin.Dial(ctx, p.Target, plugin.WithHandshakeTimeout(200*time.Millisecond), plugin.WithLogger(quiet))
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Attach(ctx); (err == nil) != served {
		t.Fatalf("attach with the adapter served=%v: %v", served, err)
	}
	adInv, _ := ad.Discover(ctx)
	n.inv = gres.Merge(found.Inventory, adInv)
	lab.nodes["p1"] = n

	rt, err := launch.New(launch.Config{Node: "p1", SpoolDir: filepath.Join(base, "p1", "spool"), Shim: []string{mustExe(t), shimArg},
		KillWait: time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := New(Config{Node: "p1", Controller: lab.dial("p1", auth.RoleAgent, "p1"), Runtime: rt, Drivers: append(found.Active, ad),
		Inventory: n.inv, SampleInterval: labSampleInterval, Logger: quiet, RetryMin: 50 * time.Millisecond, RetryMax: time.Second})
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
		ad.Close()
	})
	lab.waitFor("p1 registered", func() bool {
		nodes, err := lab.admin.ListNodes(ctx, nil)
		return err == nil && len(nodes) == 1 && nodes[0].GetRegistered()
	})
	return al

}
