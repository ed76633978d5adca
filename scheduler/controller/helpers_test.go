package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/topology"
)

// fakeClock is an injected clock tests advance by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)} }

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

const testCluster = `
cluster: test
admins: [root]
operators: [olga]
partitions:
  - name: gpu
    nodes: n[1-2]
    maxTime: 1-00:00:00
    defaultTime: "1:00:00"
  - name: cpu
    nodes: c1
nodes:
  - names: n[1-2]
    features: [h100]
    gpus: 4
    gpuType: h100
accounts:
  - name: physics
    users: [alice, bob]
  - name: bio
    users: [carol]
qos:
  - name: high
    priority: 10
heartbeatInterval: 10s
nodeDownTimeout: 1m
eventRetention: 1h
minJobAge: 10m
`

type harness struct {
	t     *testing.T
	c     *Controller
	clock *fakeClock
	dir   string
	cfg   *config.Cluster
}

// startController runs an in-process controller on a loopback port with a
// fake clock and no scheduling loop (tests call schedulePass themselves).
func startController(t *testing.T, cfgText string) *harness {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(cfgText))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: newClock(), dir: t.TempDir(), cfg: cfg}
	h.start()
	return h
}

func (h *harness) start() { h.t.Helper(); h.startWith(nil) }

// startWith is start with the options changed by mod (a ledger, a log).
func (h *harness) startWith(mod func(*Options)) {
	h.t.Helper()
	opts := Options{Config: h.cfg, Listen: "127.0.0.1:0", StateDir: h.dir, MetricsAddr: "127.0.0.1:0",
		Now: h.clock.Now, NoScheduler: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mod != nil {
		mod(&opts)
	}
	c, err := New(opts)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.c = c
	h.t.Cleanup(func() { c.Close() })
}

// restart closes the controller and opens a new one on the same state.
func (h *harness) restart() {
	h.t.Helper()
	if err := h.c.Close(); err != nil {
		h.t.Fatal(err)
	}
	h.start()
}

func (h *harness) token(user string, role auth.Role, node string) string {
	h.t.Helper()
	tok, err := auth.Sign(h.c.Key(), auth.Claims{User: user, Role: role, Node: node, IssuedAt: h.clock.Now()})
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}

// as returns a client acting as user with the given role.
func (h *harness) as(user string, role auth.Role) *client.Client {
	h.t.Helper()
	return h.dial(h.token(user, role, ""))
}

func (h *harness) agent(node string) *client.Client {
	h.t.Helper()
	return h.dial(h.token(node, auth.RoleAgent, node))
}

func (h *harness) dial(tok string) *client.Client {
	h.t.Helper()
	cl, err := client.Dial(context.Background(), h.c.Addr(), tok)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { cl.Close() })
	return cl
}

// inventory is a node with cpus CPUs on one NUMA node, 64 GiB and gpus
// h100 devices linked by NVLink.
func inventory(node string, cpus, gpus int) gres.Inventory {
	all := topology.CPURange(0, cpus-1)
	inv := gres.Inventory{Vendor: "sim", Host: &gres.Host{Hostname: node, CPUs: all, Cores: cpus, Sockets: 1, MemoryBytes: 64 << 30,
		NUMA: []topology.NUMANode{{ID: 0, CPUs: all, MemoryBytes: 64 << 30}}}}
	for i := range gpus {
		d := gres.Device{UUID: fmt.Sprintf("GPU-%s-%d", node, i), Vendor: "sim", Type: "h100", Index: i, LocalCPUs: all}
		for k := range gpus {
			if k != i {
				d.Links = append(d.Links, gres.Link{Peer: fmt.Sprintf("GPU-%s-%d", node, k), Kind: "nvlink", Class: topology.ClassFabric, Lanes: 18})
			}
		}
		inv.Devices = append(inv.Devices, d)
	}
	return inv
}

// register announces a node through its agent credential.
func (h *harness) register(node string, gpus int, running ...uint64) *pb.RegisterResponse {
	h.t.Helper()
	req := &pb.RegisterRequest{Node: node, Inventory: api.InventoryToProto(inventory(node, 16, gpus)), AgentVersion: "test"}
	for _, id := range running {
		req.Running = append(req.Running, &pb.RunningJob{JobId: id})
	}
	resp, err := h.agent(node).Register(context.Background(), req)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

func (h *harness) submit(cl *client.Client, spec *pb.JobSpec) uint64 {
	h.t.Helper()
	id, err := cl.Submit(context.Background(), spec)
	if err != nil {
		h.t.Fatalf("submit %+v: %v", spec, err)
	}
	return id
}

func (h *harness) job(id uint64) *pb.Job {
	h.t.Helper()
	j, err := h.as("root", auth.RoleAdmin).GetJob(context.Background(), id, false)
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

func (h *harness) pass() {
	h.t.Helper()
	if err := h.c.schedulePass(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

func gpuJob(name string, gpus int64) *pb.JobSpec {
	return &pb.JobSpec{Name: name, Partition: "gpu", Script: "#!/bin/sh\necho " + name + "\n", Env: map[string]string{"SECRET": "s3cr3t"},
		Gres: &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Count: gpus}}}, TimeLimitSeconds: 600}
}

type clientT = client.Client

func dialClient(addr, tok string) (*client.Client, error) {
	return client.Dial(context.Background(), addr, tok)
}
