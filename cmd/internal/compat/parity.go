package compat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parityhpc/parity/cmd/internal/userverbs"
	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/topology"
)

// anchorCluster is the Slurm anchor's shape (slurm-anchor/slurm.conf):
// cluster anchor, partition gpu (the default) of n[1-4], each node 16
// CPUs on 2 sockets, 64000 MB and 8 H100; no accounts and no QOS, as
// accounting_storage/none. Its nodes register once and never heartbeat,
// so they are told to beat hourly and count as down after a day (a run
// under the race detector takes minutes).
const anchorCluster = `
cluster: anchor
admins: [root]
heartbeatInterval: 1h
nodeDownTimeout: 24h
partitions:
  - name: gpu
    nodes: n[1-4]
    default: true
nodes:
  - names: n[1-4]
    gpus: 8
    gpuType: h100
`

// anchorNodes and the per-node shape below match slurm.conf.
const (
	anchorNodes = 4
	nodeCPUs    = 16
	nodeMemMB   = 64000
	nodeGPUs    = 8
)

// Parity is a Parity cluster of the anchor's shape in this process, its
// verbs run in-process too: a case costs calls, not process starts. Its
// scheduling loop is off, so a held job stays as submitted.
type Parity struct {
	c     *controller.Controller
	token string
}

// StartParity starts the controller with its state under stateDir and
// registers the anchor's nodes.
func StartParity(ctx context.Context, stateDir string, log *slog.Logger) (*Parity, error) {
	cfg, err := config.Parse("anchor.yaml", []byte(anchorCluster))
	if err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	c, err := controller.New(controller.Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: stateDir, MetricsAddr: "off",
		NoScheduler: true, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	p := &Parity{c: c}
	if p.token, err = p.sign("root", auth.RoleAdmin, ""); err != nil {
		c.Close()
		return nil, err
	}
	for i := 1; i <= anchorNodes; i++ {
		if err := p.register(ctx, fmt.Sprintf("n%d", i)); err != nil {
			c.Close()
			return nil, err
		}
	}
	return p, nil
}

// Close stops the controller.
func (p *Parity) Close() { p.c.Close() }

func (p *Parity) sign(user string, role auth.Role, node string) (string, error) {
	tok, err := auth.Sign(p.c.Key(), auth.Claims{User: user, Role: role, Node: node, IssuedAt: time.Now()})
	if err != nil {
		return "", fmt.Errorf("compat: sign a token for %s: %w", user, err)
	}
	return tok, nil
}

// register announces node through its agent credential, with the
// anchor's node shape.
func (p *Parity) register(ctx context.Context, node string) error {
	tok, err := p.sign(node, auth.RoleAgent, node)
	if err != nil {
		return err
	}
	half := nodeCPUs / 2
	mem := uint64(nodeMemMB) << 20
	inv := gres.Inventory{Vendor: "sim", Host: &gres.Host{Hostname: node, CPUs: topology.CPURange(0, nodeCPUs-1), Cores: nodeCPUs,
		Sockets: 2, MemoryBytes: mem, NUMA: []topology.NUMANode{
			{ID: 0, CPUs: topology.CPURange(0, half-1), MemoryBytes: mem / 2},
			{ID: 1, CPUs: topology.CPURange(half, nodeCPUs-1), MemoryBytes: mem / 2}}}}
	for i := range nodeGPUs {
		inv.Devices = append(inv.Devices, gres.Device{UUID: fmt.Sprintf("GPU-%s-%d", node, i), Vendor: "sim", Type: "h100",
			Index: i, LocalCPUs: topology.CPURange(0, nodeCPUs-1)})
	}
	agent, err := client.Dial(ctx, p.c.Addr(), tok)
	if err != nil {
		return fmt.Errorf("compat: register %s: %w", node, err)
	}
	defer agent.Close()
	if _, err := agent.Register(ctx, &pb.RegisterRequest{Node: node, Inventory: api.InventoryToProto(inv), AgentVersion: "compat"}); err != nil {
		return fmt.Errorf("compat: register %s: %w", node, err)
	}
	return nil
}

// Run runs argv as the Slurm-named verb, as root, in dir.
func (p *Parity) Run(ctx context.Context, dir string, env map[string]string, argv ...string) (string, string, int) {
	vars := map[string]string{"USER": "root", "HOME": "/root", "PATH": "/usr/bin:/bin",
		clientenv.EnvController: p.c.Addr(), clientenv.EnvToken: p.token}
	for k, v := range env {
		vars[k] = v
	}
	w := userverbs.World{
		Now: time.Now, Loc: time.Local,
		Getenv: func(k string) string { return vars[k] },
		Environ: func() []string {
			out := make([]string, 0, len(vars))
			for k, v := range vars {
				out = append(out, k+"="+v)
			}
			slices.Sort(out)
			return out
		},
		Getwd:    func() (string, error) { return dir, nil },
		Hostname: os.Hostname,
		Stdin:    strings.NewReader(""),
	}
	var out, errb strings.Builder
	code := userverbs.RunIn(ctx, w, argv, &out, &errb)
	return out.String(), errb.String(), code
}

// Compare runs every recorded case on side (in directories under base),
// workers at a time, and tabulates its answers against Slurm's. Cases
// are independent (each job is cancelled after it is read), so their
// order does not matter; the table is built in corpus order.
func Compare(ctx context.Context, side Side, base string, cases []Case, workers int) (*Table, error) {
	for _, c := range cases {
		if c.Slurm == nil {
			return nil, fmt.Errorf("compat: case %s has no recorded Slurm answer", c.ID)
		}
	}
	prev, err := Prev(ctx, side, base+"/prev")
	if err != nil {
		return nil, err
	}
	answers, errs := make([]*Answer, len(cases)), make([]error, len(cases))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				answers[i], errs[i] = Run(ctx, side, base, prev, cases[i])
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	t := NewTable()
	for i, c := range cases {
		t.Add(c.ID, c.Slurm, answers[i])
	}
	return t, nil
}
