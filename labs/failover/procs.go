package failover

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
)

// group is the controllers' processes.
type group struct {
	exe, dir string
	addrs    []string
	procs    map[string]*exec.Cmd
	exited   map[string]chan struct{}
	key      auth.Key
}

// clusterFile is a small cluster whose jobs only queue: the trials count
// acknowledgements, and nodes that never register run nothing. Every
// trial's jobs stay queued, so the job limit is the run's size.
const clusterFile = `cluster: failover
maxJobCount: %d
partitions:
  - name: batch
    nodes: n[1-4]
nodes:
  - names: n[1-4]
    cpus: 64
`

func startGroup(ctx context.Context, exe, dir string, n, maxJobs int) (*group, error) {
	g := &group{exe: exe, dir: dir, procs: map[string]*exec.Cmd{}, exited: map[string]chan struct{}{}}
	for range n {
		a, err := freeAddr()
		if err != nil {
			return nil, err
		}
		g.addrs = append(g.addrs, a)
	}
	cfg := fmt.Sprintf(clusterFile, maxJobs) + "controllers: [" + strings.Join(g.addrs, ", ") + "]\n"
	if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	var err error
	if g.key, err = auth.LoadOrCreateKey(filepath.Join(g.stateDir(g.addrs[0]), "cluster.key")); err != nil {
		return nil, err
	}
	keyText, err := os.ReadFile(filepath.Join(g.stateDir(g.addrs[0]), "cluster.key"))
	if err != nil {
		return nil, err
	}
	for _, a := range g.addrs[1:] {
		if err := os.MkdirAll(g.stateDir(a), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(g.stateDir(a), "cluster.key"), keyText, 0o600); err != nil {
			return nil, err
		}
	}
	for _, a := range g.addrs {
		if err := g.start(a); err != nil {
			g.stop()
			return nil, err
		}
	}
	return g, nil
}

// freeAddr is a loopback port the OS gave and took back: the controllers'
// list must name ports before the controllers start.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func (g *group) stateDir(addr string) string {
	return filepath.Join(g.dir, "controller-"+strings.ReplaceAll(addr, ":", "-"))
}

func (g *group) start(addr string) error {
	logf, err := os.OpenFile(g.stateDir(addr)+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(g.exe, "controller", "--config", filepath.Join(g.dir, "cluster.yaml"), "--listen", addr,
		"--advertise", addr, "--state-dir", g.stateDir(addr), "--metrics-addr", "off", "--ledger", "off", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("failover: start controller %s: %w", addr, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	g.procs[addr], g.exited[addr] = cmd, done
	return nil
}

// kill sends SIGKILL to the controller at addr and reaps it.
func (g *group) kill(addr string) error {
	cmd := g.procs[addr]
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("failover: kill %s: %w", addr, err)
	}
	<-g.exited[addr]
	delete(g.procs, addr)
	return nil
}

func (g *group) stop() {
	for a, cmd := range g.procs {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-g.exited[a]:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-g.exited[a]
		}
	}
}

func (g *group) dial(addr, user string, role auth.Role) (*client.Client, error) {
	tok, err := auth.Sign(g.key, auth.Claims{User: user, Role: role, IssuedAt: time.Now()})
	if err != nil {
		return nil, err
	}
	return client.Dial(context.Background(), addr, tok)
}

// leader waits for the controller that serves, among those running.
func (g *group) leader(ctx context.Context, limit time.Duration) (string, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		for _, a := range g.addrs {
			if g.procs[a] == nil {
				continue
			}
			if st := g.status(ctx, a); st != nil && st.GetServing() {
				return a, nil
			}
		}
		if err := clientenv.Sleep(ctx, 20*time.Millisecond); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("failover: no controller of %v serves after %s", g.addrs, limit)
}
