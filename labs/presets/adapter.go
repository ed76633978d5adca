package presets

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// AdapterFinder returns the path of an out-of-tree adapter's executable
// by its command name.
type AdapterFinder func(ctx context.Context, name string) (string, error)

// AdapterEnv lists directories searched first for an adapter's
// executable, as PATH does.
const AdapterEnv = "PARITY_ADAPTER_PATH"

// FindAdapter looks for an adapter's executable in $PARITY_ADAPTER_PATH,
// beside this executable, then on $PATH.
func FindAdapter(_ context.Context, name string) (string, error) {
	var dirs []string
	if v := os.Getenv(AdapterEnv); v != "" {
		dirs = filepath.SplitList(v)
	}
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	return "", fmt.Errorf("presets: adapter %s not found in $%s, beside %s or on $PATH", name, AdapterEnv, "this executable")
}

// AdapterRun is an out-of-tree adapter a simulated machine runs as its own
// process, as a site runs its vendor's: it serves Socket, and ConfigFile is
// an agent config file (parity agent --config) whose drivers entry
// attaches it. Machine.Close stops it.
type AdapterRun struct {
	Name       string
	Socket     string
	ConfigFile string
	// Log holds the process's output.
	Log string

	cmd    *exec.Cmd
	tmp    string // the socket's directory when outside the root
	exited chan struct{}
	err    error // the process's exit, once exited is closed
}

// adapterStart is how to start one adapter process.
type adapterStart struct {
	name, command string
	args          []string
	socket, root  string
	tmp           string // the socket's own directory, removed at stop
	// policy is the drivers entry's keys besides plugin (YAML, indented
	// under the entry).
	policy string
}

// startAdapter starts the process, waits until its socket accepts
// connections and writes the config file that attaches it.
func startAdapter(ctx context.Context, s adapterStart) (*AdapterRun, error) {
	r := &AdapterRun{Name: s.name, Socket: s.socket, tmp: s.tmp, ConfigFile: filepath.Join(s.root, "etc", "parity", "agent.yaml"),
		Log: filepath.Join(s.root, "var", "log", s.name+".log"), exited: make(chan struct{})}
	for _, d := range []string{filepath.Dir(r.ConfigFile), filepath.Dir(r.Log), filepath.Dir(s.socket)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			_ = r.stop()
			return nil, fmt.Errorf("presets: adapter %s: %w", s.name, err)
		}
	}
	cfg := fmt.Sprintf("# Written by the lab: the agent attaches %s as a site's config file would.\ndrivers:\n  - plugin: unix://%s\n%s",
		s.name, s.socket, s.policy)
	if err := os.WriteFile(r.ConfigFile, []byte(cfg), 0o644); err != nil {
		return nil, fmt.Errorf("presets: adapter %s: %w", s.name, err)
	}
	logf, err := os.Create(r.Log)
	if err != nil {
		return nil, fmt.Errorf("presets: adapter %s: %w", s.name, err)
	}
	defer logf.Close()
	r.cmd = exec.Command(s.command, s.args...)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	// Its own process group, killed with the lab's process if that dies
	// first: an adapter outliving its lab would hold the socket.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("presets: start adapter %s: %w", s.name, err)
	}
	go func() { r.err = r.cmd.Wait(); close(r.exited) }()
	if err := r.waitSocket(ctx, 20*time.Second); err != nil {
		_ = r.stop()
		return nil, err
	}
	return r, nil
}

// waitSocket polls until the socket accepts a connection, the process
// exits, or limit passes.
func (r *AdapterRun) waitSocket(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		if c, err := net.Dial("unix", r.Socket); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-r.exited:
			return fmt.Errorf("presets: adapter %s exited before serving %s (%v): %s", r.Name, r.Socket, r.err, r.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("presets: adapter %s did not serve %s within %v: %s", r.Name, r.Socket, limit, r.logTail())
		}
	}
}

// logTail is the end of the process's log, for messages.
func (r *AdapterRun) logTail() string {
	b, _ := os.ReadFile(r.Log)
	s := strings.TrimSpace(string(b))
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	if s == "" {
		return "no output"
	}
	return s
}

// stop ends the process: SIGTERM, then SIGKILL after a grace period.
func (r *AdapterRun) stop() error {
	if r.tmp != "" {
		defer os.RemoveAll(r.tmp)
	}
	if r.cmd == nil || r.cmd.Process == nil {
		return nil
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.exited
	}
	var exit *exec.ExitError
	if r.err != nil && !errors.As(r.err, &exit) {
		return fmt.Errorf("presets: adapter %s: %w", r.Name, r.err)
	}
	return nil
}

// adapterSocket is where a machine's adapter serves: under its root when
// the path fits a unix socket address (108 bytes), else in a short
// temporary directory (tmp, which the caller removes).
func adapterSocket(root, name string) (sock, tmp string, err error) {
	p := filepath.Join(root, "run", "parity", name+".sock")
	if len(p) < 100 {
		return p, "", nil
	}
	d, err := os.MkdirTemp("", "pa-")
	if err != nil {
		return "", "", err
	}
	return filepath.Join(d, name+".sock"), d, nil
}
