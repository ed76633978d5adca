package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// RunDir holds a process lab's pid files (one per daemon), so `parity lab
// down` can stop daemons whose parent died.
const RunDir = "run"

// ProcOptions say how to run a lab as separate processes.
type ProcOptions struct {
	Lab *labfile.Lab
	// Dir holds everything the lab writes; it is created if missing.
	Dir string
	// Exe is the parity binary the daemons run as (default: this executable).
	Exe string
	// Users and Admins are as in Options.
	Users, Admins []string
	Logger        *slog.Logger
	// NoIsolation runs jobs without cgroups even where they work.
	NoIsolation bool
	// Controllers is as in Options: 1 (0) or 3 or 5 controller processes.
	Controllers int
}

// Procs is a lab whose controller and agents run as child processes
// (`parity controller`, one agent per node: `parity-agent --config FILE`
// where the node's machine needs no simulator inside the agent, else
// `parity agent --sim-lab DIR`), each with a pid file under DIR/run and a
// log under DIR/logs.
type Procs struct {
	Lab *labfile.Lab
	Dir string
	// Addr is as in Cluster: the controllers' comma-separated list when
	// the lab runs several.
	Addr string
	// Isolation and IsolationOf are as in Cluster.
	Isolation   bool
	IsolationOf string
	LedgerPath  string
	CgroupRoot  string

	log      *slog.Logger
	key      auth.Key
	exe      string
	mu       sync.Mutex
	children []*child // the agents
	// lean is the parity-agent binary ("" when the lab has none);
	// machines are the nodes' machines the lab built for it.
	lean     string
	machines []*presets.Machine
	// ctls are the controllers' processes, by ctlAddrs' order (a killed
	// one stays until restarted); lis their listeners until spawned.
	ctls     []*child
	ctlAddrs []string
	lis      []net.Listener
}

// child is one daemon process.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed once reaped
	log  *os.File
}

// UpProcesses starts the controller and one agent per node as separate
// processes and returns once every node has registered.
func UpProcesses(ctx context.Context, opts ProcOptions) (*Procs, error) {
	if opts.Lab == nil {
		return nil, errors.New("cluster: no lab")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	exe := opts.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("cluster: find the parity binary: %w", err)
		}
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	croot, err := CgroupRoot(opts.Lab.Name, dir)
	if err != nil {
		return nil, err
	}
	if err := checkControllers(opts.Controllers); err != nil {
		return nil, err
	}
	p := &Procs{Lab: opts.Lab, Dir: dir, CgroupRoot: croot, log: log, exe: exe}
	// The same checks as the in-process lab; each agent repeats them.
	iso := &Cluster{log: log}
	iso.cgroups(opts.NoIsolation)
	p.Isolation, p.IsolationOf = iso.Isolation, iso.IsolationOf
	if err := p.writeFiles(append([]string{"root", "admin"}, opts.Admins...), append([]string{"root", "admin", "nobody"}, opts.Users...), max(opts.Controllers, 1)); err != nil {
		closeAll(p.lis)
		return nil, err
	}
	if err := p.startControllers(ctx); err != nil {
		p.Down(context.WithoutCancel(ctx))
		return nil, err
	}
	if p.lean = findLeanAgent(exe); p.lean == "" {
		log.Info("no " + LeanAgent + " beside " + exe + " (make build puts it there): every node's agent runs as `parity agent --sim-lab`")
	}
	for _, n := range opts.Lab.NodeList() {
		if err := p.startAgent(ctx, exe, n.Name, opts.NoIsolation || !p.Isolation); err != nil {
			p.Down(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	if err := waitNodes(ctx, p.Client, len(opts.Lab.NodeList()), p.exited); err != nil {
		p.Down(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%w (logs in %s)", err, filepath.Join(dir, LogsDir))
	}
	return p, nil
}

// writeFiles writes the lab, the cluster configuration and the cluster key
// the controller will load, so this process can sign tokens.
func (p *Procs) writeFiles(admins, users []string, n int) error {
	stateDir := ControllerStateDir(p.Dir, 0)
	for _, d := range []string{stateDir, filepath.Join(p.Dir, RunDir), filepath.Join(p.Dir, LogsDir)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	labYAML, err := yaml.Marshal(p.Lab)
	if err != nil {
		return fmt.Errorf("cluster: lab %s: %w", p.Lab.Name, err)
	}
	if err := os.WriteFile(filepath.Join(p.Dir, LabFile), labYAML, 0o644); err != nil {
		return err
	}
	var ch configChoices
	if n > 1 {
		if p.lis, p.ctlAddrs, err = reserveListeners(n); err != nil {
			return err
		}
		ch.controllers = p.ctlAddrs
	}
	text := controllerYAML(p.Lab, stateDir, admins, users, ch)
	if err := os.WriteFile(filepath.Join(p.Dir, "cluster.yaml"), []byte(text), 0o644); err != nil {
		return err
	}
	// Each controller keeps its own ledger; this is the first's.
	p.LedgerPath = filepath.Join(stateDir, "accounting.db")
	p.key, err = shareKey(p.Dir, n)
	return err
}

// startAgent starts node's agent: parity-agent over a config file where
// the lab has that binary and the node's machine is files and adapter
// processes (the lab builds it, as a site's node is set up before its
// agent starts), else `parity agent --sim-lab`, which builds the node's
// simulated machine inside the agent (NVML and amdgpu fakes are
// in-process, and parity-agent carries no simulators).
func (p *Procs) startAgent(ctx context.Context, exe, node string, noIsolation bool) error {
	tok, err := auth.Sign(p.key, auth.Claims{User: "agent:" + node, Role: auth.RoleAgent, Node: node, IssuedAt: time.Now()})
	if err != nil {
		return err
	}
	bin := exe
	args := []string{"agent", "--controller", p.Addr, "--node", node, "--spool", NodeSpool(p.Dir, node),
		"--cgroup-root", p.CgroupRoot, "--metrics-addr", "off", "--sim-lab", p.Dir, "--sim-node", node,
		"--kill-wait", "2s", "--sample-interval", "1s"}
	if noIsolation {
		args = append(args, "--no-isolation")
	}
	if p.lean != "" {
		ln, ok, err := p.buildLeanNode(ctx, node, !noIsolation)
		if err != nil {
			return err
		}
		if ok {
			p.mu.Lock()
			p.machines = append(p.machines, ln.machine)
			p.mu.Unlock()
			bin, args = p.lean, p.leanAgentArgs(node, ln.config, noIsolation)
		}
	}
	// The token goes in the environment, not on a command line anyone can read.
	c, err := p.spawn(bin, "agent-"+node, []string{client.EnvToken + "=" + tok}, nil, args...)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.children = append(p.children, c)
	p.mu.Unlock()
	return nil
}

// spawn starts one daemon with its log and pid file; files are passed
// to it as descriptors 3 and up.
func (p *Procs) spawn(exe, name string, env []string, files []*os.File, args ...string) (*child, error) {
	logf, err := os.OpenFile(filepath.Join(p.Dir, LogsDir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.ExtraFiles = files
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: a Ctrl-C at the terminal reaches the lab
	// process, which stops the daemons in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("cluster: start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{}), log: logf}
	go func() { _ = cmd.Wait(); close(c.done) }()
	pid := filepath.Join(p.Dir, RunDir, name+".pid")
	if err := os.WriteFile(pid, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		return c, err
	}
	p.log.Info("started", "daemon", name, "pid", cmd.Process.Pid)
	return c, nil
}

// Token signs a token for user with role (auth.RoleUser when empty).
func (p *Procs) Token(user string, role auth.Role) (string, error) {
	return signUser(p.key, user, role)
}

// Client dials the lab's controller as user.
func (p *Procs) Client(ctx context.Context, user string) (*client.Client, error) {
	tok, err := p.Token(user, "")
	if err != nil {
		return nil, err
	}
	return client.Dial(ctx, p.Addr, tok)
}

// exited reports a daemon that has exited, so a start fails at once
// rather than after the registration timeout.
func (p *Procs) exited() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range slices.Concat(p.ctls, p.children) {
		if c == nil {
			continue
		}
		select {
		case <-c.done:
			return fmt.Errorf("cluster: %s exited at start: %s (see %s)", c.name, c.cmd.ProcessState, c.log.Name())
		default:
		}
	}
	return nil
}

// waitNodes polls the controller until n nodes have registered, or dead
// says a daemon has died.
func waitNodes(ctx context.Context, dial func(context.Context, string) (*client.Client, error), n int, dead func() error) error {
	cl, err := dial(ctx, "admin")
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		nodes, err := cl.ListNodes(ctx, nil)
		if err == nil {
			up := 0
			for _, nd := range nodes {
				if nd.GetRegistered() {
					up++
				}
			}
			if up >= n {
				return nil
			}
		}
		if derr := dead(); derr != nil {
			return derr
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: not every node registered: %w (last error: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}
