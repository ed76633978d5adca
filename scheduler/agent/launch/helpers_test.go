package launch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/agent/shim"
	"github.com/parityhpc/parity/topology"
)

// shimArg makes the test binary act as the shim, as the parity binary's
// "agent shim" subcommand does in production.
const shimArg = "__parity_shim__"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == shimArg {
		os.Exit(shim.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// nobody is the unprivileged user jobs run as in these tests.
const nobodyUID, nobodyGID = 65534, 65534

// waitTimeout bounds every wait on a job; reaching it fails the test.
const waitTimeout = 60 * time.Second

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to switch users, mknod device nodes and create cgroups")
	}
}

// requireCgroups returns a manager for the host's cgroups or skips,
// saying why.
func requireCgroups(t testing.TB) *cgroup.Manager {
	t.Helper()
	requireRoot(t)
	mode, why := cgroup.Detect()
	m, err := cgroup.NewManager(mode)
	if err != nil {
		t.Skipf("skipped: isolation tests need cgroups (%s): %v", why, err)
	}
	if mode == cgroup.V2 {
		for _, c := range []string{"memory", "cpuset"} {
			if !slices.Contains(m.V2Controllers(), c) {
				t.Skipf("skipped: cgroup v2 root does not offer the %s controller", c)
			}
		}
	}
	return m
}

// manualClock is a Clock tests advance by hand; timers fire in their own
// goroutines, as time.AfterFunc's do.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	c    *manualClock
	at   time.Time
	f    func()
	done bool
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// Advance moves time forward and starts every timer that came due; it
// returns how many fired.
func (c *manualClock) Advance(d time.Duration) int {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	for _, t := range c.timers {
		if !t.done && !t.at.After(c.now) {
			t.done = true
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		go f()
	}
	return len(due)
}

// env is one test's node: a runtime over a private spool and cgroup root.
type env struct {
	t      testing.TB
	base   string // searchable by the job's user; put fixtures below it
	rt     *Runtime
	cfg    Config
	clock  *manualClock
	work   string // a directory the job's user may write
	cgRoot string
}

func newEnv(t testing.TB, mgr *cgroup.Manager, mutate func(*Config)) *env {
	t.Helper()
	base := t.TempDir()
	// Jobs run as nobody: the path down to their files must be searchable.
	for d := base; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(work, 0o777)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	clock := newManualClock()
	cgRoot := fmt.Sprintf("/parity-test-%d-%s", os.Getpid(), strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	cfg := Config{Node: "n1", SpoolDir: filepath.Join(base, "spool"), Cgroups: mgr, CgroupRoot: cgRoot,
		Shim: []string{exe, shimArg}, KillWait: 5 * time.Second, Clock: clock,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if mutate != nil {
		mutate(&cfg)
	}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, base: base, rt: rt, cfg: cfg, clock: clock, work: work, cgRoot: cgRoot}
	t.Cleanup(func() {
		e.rt.Close()
		removeCgroupTree(t, cgRoot)
	})
	return e
}

// restart closes the runtime and opens a new one over the same spool.
func (e *env) restart() {
	e.t.Helper()
	if err := e.rt.Close(); err != nil {
		e.t.Fatal(err)
	}
	rt, err := New(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.rt = rt
}

// spec is a batch job as nobody in the work directory.
func (e *env) spec(id uint64, script string) Spec {
	return Spec{JobID: id, Name: "job" + fmt.Sprint(id), User: "nobody", UID: nobodyUID, GID: nobodyGID, Groups: []uint32{},
		Script: "#!/bin/sh\n" + script, WorkDir: e.work, Nodes: []string{"n1"}, Env: map[string]string{"PATH": "/usr/bin:/bin"}}
}

func (e *env) launch(s Spec) {
	e.t.Helper()
	if err := e.rt.Launch(context.Background(), s); err != nil {
		e.t.Fatalf("launch job %d: %v", s.JobID, err)
	}
}

// waitEnd returns the next end delivered by the runtime.
func (e *env) waitEnd() JobEnd {
	e.t.Helper()
	select {
	case end, ok := <-e.rt.Events():
		if !ok {
			e.t.Fatal("events channel closed")
		}
		return end
	case <-time.After(waitTimeout):
		e.t.Fatalf("no job ended within %s", waitTimeout)
	}
	return JobEnd{}
}

// fifo makes a named pipe in the work directory the job writes to, so the
// test waits for the job's own word instead of sleeping.
func (e *env) fifo(name string) string {
	e.t.Helper()
	p := filepath.Join(e.work, name)
	if err := mkfifo(p); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// readLine waits for the job to write one line into a fifo.
func (e *env) readLine(path string) string {
	e.t.Helper()
	got := make(chan string, 1)
	go func() {
		b, err := os.ReadFile(path) // blocks until the writer opens and closes it
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- strings.TrimSpace(string(b))
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(waitTimeout):
		e.t.Fatalf("nothing written to %s within %s", path, waitTimeout)
	}
	return ""
}

// writeLine hands the job a line through a fifo it reads.
func (e *env) writeLine(path, line string) {
	e.t.Helper()
	done := make(chan error, 1)
	go func() { done <- os.WriteFile(path, []byte(line+"\n"), 0) }()
	select {
	case err := <-done:
		if err != nil {
			e.t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		e.t.Fatalf("the job did not open %s within %s", path, waitTimeout)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// removeCgroupTree removes test groups left behind (deepest first) in
// every v1 hierarchy and the v2 mount; a leftover is a test failure.
func removeCgroupTree(t testing.TB, root string) {
	killGroupTree(t, root)
	var left []string
	for _, base := range cgroupBases() {
		top := filepath.Join(base, root)
		var dirs []string
		filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := os.Remove(dirs[i]); err != nil && !os.IsNotExist(err) {
				left = append(left, dirs[i]+": "+err.Error())
			}
		}
	}
	if len(left) > 0 {
		t.Errorf("could not remove test cgroups: %v", left)
	}
}

func cgroupBases() []string {
	var out []string
	for _, n := range []string{"devices", "memory", "cpuset", "freezer", "cpuacct", "pids", "unified"} {
		out = append(out, filepath.Join("/sys/fs/cgroup", n))
	}
	return out
}

func mustCPUs(t testing.TB, list string) topology.CPUSet {
	t.Helper()
	s, err := topology.ParseCPUList(list)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// killGroupTree SIGKILLs whatever a failed test left in its groups and
// waits (bounded) for them to go, so one failure does not leak processes.
func killGroupTree(t testing.TB, root string) {
	top := filepath.Join("/sys/fs/cgroup/devices", root)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var pids []int
		filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Name() == "cgroup.procs" {
				b, _ := os.ReadFile(p)
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil {
						pids = append(pids, pid)
					}
				}
			}
			return nil
		})
		if len(pids) == 0 {
			return
		}
		t.Logf("killing leftover processes %v", pids)
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond) // cleanup only: let the kernel reap before rmdir
	}
}
