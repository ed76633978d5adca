package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/parityhpc/parity/labs/cluster"
)

// daemon is one lab process the harness kills and starts again: adopted
// from the lab's pid file (the lab reaps it), or started by the harness
// with the command line and environment of the one it replaces.
type daemon struct {
	name string
	pid  int
	// exe is the binary it runs when the lab started it by an absolute
	// path (a process lab's parity-agent nodes); "" means the lab's parity.
	exe  string
	args []string // without argv[0]
	env  []string
	// done is closed once this harness reaped the process; nil for an
	// adopted daemon, which the lab that started it reaps.
	done chan struct{}
}

// adopt finds the lab daemon called name (controller, agent-NODE) by its
// pid file under dir and reads its command line and environment, so it
// can be started again exactly as the lab started it.
func adopt(dir, name string) (*daemon, error) {
	b, err := os.ReadFile(filepath.Join(dir, cluster.RunDir, name+".pid"))
	if err != nil {
		return nil, fmt.Errorf("chaos: %s: %w", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return nil, fmt.Errorf("chaos: %s: pid file holds %q", name, b)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, fmt.Errorf("chaos: %s (pid %d): %w", name, pid, err)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return nil, fmt.Errorf("chaos: %s (pid %d): %w", name, pid, err)
	}
	argv := splitNUL(cmdline)
	if len(argv) < 2 {
		return nil, fmt.Errorf("chaos: %s (pid %d): command line %q", name, pid, cmdline)
	}
	d := &daemon{name: name, pid: pid, args: argv[1:], env: splitNUL(environ)}
	if filepath.IsAbs(argv[0]) {
		d.exe = argv[0]
	}
	return d, nil
}

func splitNUL(b []byte) []string {
	var out []string
	for _, f := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
		out = append(out, string(f))
	}
	return out
}

// spawn starts exe with args and env as the lab daemon called name: its
// log appended to the lab's, its pid file replaced, in a process group of
// its own (as the lab starts its daemons).
func spawn(dir, exe, name string, args, env []string) (*daemon, error) {
	logf, err := os.OpenFile(filepath.Join(dir, cluster.LogsDir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own copy
	cmd := exec.Command(exe, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("chaos: start %s: %w", name, err)
	}
	d := &daemon{name: name, pid: cmd.Process.Pid, exe: exe, args: args, env: env, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(d.done) }()
	pidFile := filepath.Join(dir, cluster.RunDir, name+".pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(d.pid)+"\n"), 0o644); err != nil {
		return d, err
	}
	return d, nil
}

// alive reports whether the process still runs (a zombie does not).
func (d *daemon) alive() bool {
	if d.done != nil {
		select {
		case <-d.done:
			return false
		default:
			return true
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.pid))
	return err == nil && !zombie(b)
}

// zombie reports whether a /proc/PID/stat line is an exited process.
func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// kill sends sig and waits until the process is gone; after SIGTERM it
// waits 15 seconds, then sends SIGKILL.
func (d *daemon) kill(ctx context.Context, sig syscall.Signal) error {
	if !d.alive() {
		return nil
	}
	if err := syscall.Kill(d.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("chaos: signal %s (pid %d): %w", d.name, d.pid, err)
	}
	wait := 10 * time.Second
	if sig == syscall.SIGTERM {
		wait = 15 * time.Second
	}
	if err := d.waitGone(ctx, wait); err == nil || sig == syscall.SIGKILL {
		return err
	}
	_ = syscall.Kill(d.pid, syscall.SIGKILL)
	return d.waitGone(ctx, 10*time.Second)
}

func (d *daemon) waitGone(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for d.alive() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("chaos: %s (pid %d) still runs: %w", d.name, d.pid, ctx.Err())
		case <-d.done: // nil for an adopted daemon: never ready
		case <-tick.C:
		}
	}
	return nil
}

// memory returns the process's resident set and its peak (VmRSS and
// VmHWM of /proc/PID/status), in bytes.
func (d *daemon) memory() (rss, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.pid))
	if err != nil {
		return 0, 0, fmt.Errorf("chaos: %s memory: %w", d.name, err)
	}
	return statusKB(b, "VmRSS:") << 10, statusKB(b, "VmHWM:") << 10, nil
}

// resetPeak starts VmHWM afresh from the current resident set.
func (d *daemon) resetPeak() error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", d.pid), []byte("5"), 0)
}

// statusKB reads one "Key:   123 kB" line of /proc/PID/status; 0 when absent.
func statusKB(status []byte, key string) int64 {
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// withFlag returns args with flag's value replaced (or the flag added).
func withFlag(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if out[i] == flag && i+1 < len(out) {
			out[i+1] = value
			return out
		}
		if strings.HasPrefix(out[i], flag+"=") {
			out[i] = flag + "=" + value
			return out
		}
	}
	return append(out, flag, value)
}
