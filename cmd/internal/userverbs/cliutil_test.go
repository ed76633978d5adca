package userverbs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"strings"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/topology"
)

const e2eCluster = `
cluster: cli
admins: [root]
operators: [olga]
partitions:
  - name: gpu
    nodes: n[1-2]
    default: true
    maxTime: 1-00:00:00
    defaultTime: "1:00:00"
  - name: debug
    nodes: n1
    maxTime: "30"
nodes:
  - names: n[1-2]
    features: [h100]
    gpus: 4
    gpuType: h100
accounts:
  - name: physics
    users: [alice, bob]
`

// cliCluster is an in-process controller on a loopback port with its
// state in a temporary directory and no scheduling loop, so jobs stay
// pending and every observation is deterministic.
type cliCluster struct {
	t   testing.TB
	c   *controller.Controller
	dir string
}

func startCLICluster(t testing.TB) *cliCluster {
	t.Helper()
	cfg, err := config.Parse("cli.yaml", []byte(e2eCluster))
	if err != nil {
		t.Fatal(err)
	}
	c, err := controller.New(controller.Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: t.TempDir(), MetricsAddr: "off",
		NoScheduler: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &cliCluster{t: t, c: c, dir: t.TempDir()}
}

func (cl *cliCluster) token(user string, role auth.Role, node string) string {
	cl.t.Helper()
	tok, err := auth.Sign(cl.c.Key(), auth.Claims{User: user, Role: role, Node: node, IssuedAt: testNow})
	if err != nil {
		cl.t.Fatal(err)
	}
	return tok
}

// as is the environment of user (role from the cluster file: root is an
// admin, olga an operator) in the cluster's work directory; the address
// and token travel in PARITY_CONTROLLER and PARITY_TOKEN.
func (cl *cliCluster) as(user string, extra map[string]string) userEnv {
	role := auth.RoleUser
	switch user {
	case "root":
		role = auth.RoleAdmin
	case "olga":
		role = auth.RoleOperator
	}
	vars := map[string]string{"USER": user, "PATH": "/usr/bin:/bin", client.EnvController: cl.c.Addr(),
		client.EnvToken: cl.token(user, role, "")}
	maps.Copy(vars, extra)
	return testEnv(cl.dir, vars, "")
}

// register announces node with gpus h100 devices through its agent credential.
func (cl *cliCluster) register(node string, gpus int) {
	cl.t.Helper()
	all := topology.CPURange(0, 15)
	inv := gres.Inventory{Vendor: "sim", Host: &gres.Host{Hostname: node, CPUs: all, Cores: 16, Sockets: 1, MemoryBytes: 64 << 30,
		NUMA: []topology.NUMANode{{ID: 0, CPUs: all, MemoryBytes: 64 << 30}}}}
	for i := range gpus {
		inv.Devices = append(inv.Devices, gres.Device{UUID: fmt.Sprintf("GPU-%s-%d", node, i), Vendor: "sim", Type: "h100", Index: i, LocalCPUs: all})
	}
	agent, err := client.Dial(context.Background(), cl.c.Addr(), cl.token(node, auth.RoleAgent, node))
	if err != nil {
		cl.t.Fatal(err)
	}
	defer agent.Close()
	if _, err := agent.Register(context.Background(), &pb.RegisterRequest{Node: node, Inventory: api.InventoryToProto(inv), AgentVersion: "test"}); err != nil {
		cl.t.Fatal(err)
	}
}

// ok runs argv and fails the test unless it exits 0; it returns stdout.
func (cl *cliCluster) ok(env userEnv, argv ...string) string {
	cl.t.Helper()
	out, errs, code := runCLI(env, argv...)
	if code != 0 {
		cl.t.Fatalf("%q: exit %d\n%s", argv, code, errs)
	}
	return out
}

// fails runs argv, wants exit status code and every fragment in stderr.
func (cl *cliCluster) fails(env userEnv, code int, argv []string, fragments ...string) {
	cl.t.Helper()
	_, errs, got := runCLI(env, argv...)
	if got != code {
		cl.t.Errorf("%q: exit %d, want %d\n%s", argv, got, code, errs)
	}
	for _, f := range fragments {
		if !strings.Contains(errs, f) {
			cl.t.Errorf("%q: stderr lacks %q:\n%s", argv, f, errs)
		}
	}
}

// rows returns a table's lines after the header, cells joined by one space.
func rows(out string) []string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var r []string
	for _, l := range lines[1:] {
		r = append(r, strings.Join(strings.Fields(l), " "))
	}
	return r
}

// record parses one scontrol show record into its Key=Value pairs.
func record(out string) map[string]string {
	m := map[string]string{}
	var last string
	for _, w := range strings.Fields(out) {
		if k, v, ok := strings.Cut(w, "="); ok {
			m[k], last = v, k
		} else if last != "" {
			m[last] += " " + w
		}
	}
	return m
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
