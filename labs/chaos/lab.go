package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/labs/cluster"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
)

// Identities of the matrix and the streams: alice and bob are plain
// users, opal holds an operator token; root and admin are admins.
const (
	userAlice = "alice"
	userBob   = "bob"
	userOpal  = "opal"
)

// labOptions say how one scenario's lab differs from the plain one.
type labOptions struct {
	// name is the lab's directory under Options.Dir.
	name string
	// config sets top-level keys of the cluster file (nodeDownTimeout:
	// 4s); the controller is restarted on it before the scenario.
	config map[string]string
	// tmpfsState, when positive, puts the controller's state directory
	// on a tmpfs of that many bytes, which the scenario can fill.
	tmpfsState int64
}

// lab is one scenario's running process lab.
type lab struct {
	p     *cluster.Procs
	exe   string
	dir   string
	key   auth.Key
	log   *slog.Logger
	admin *client.Client
	// ctl is the controller process now; extra are the daemons this
	// harness started (restarted agents), stopped at down.
	ctl     *daemon
	mu      sync.Mutex
	extra   []*daemon
	started []*daemon // controllers this harness started, stopped last
	mounted string
}

// upLab starts a process lab for one scenario.
func upLab(ctx context.Context, o *Options, lo labOptions) (*lab, error) {
	dir := filepath.Join(o.Dir, lo.name)
	// What an earlier run that died left there: its daemons, its job
	// groups, its tmpfs.
	if err := cluster.StopStale(ctx, dir, io.Discard); err != nil {
		return nil, fmt.Errorf("chaos: an earlier run's daemons in %s: %w", dir, err)
	}
	if croot, err := cluster.CgroupRoot(o.lab.Name, dir); err == nil {
		_ = cluster.RemoveCgroups(croot)
	}
	_ = unix.Unmount(filepath.Join(dir, "controller"), unix.MNT_DETACH)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "controller"), 0o700); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	l := &lab{exe: o.Exe, dir: dir, log: o.Logger.With("lab", lo.name)}
	if lo.tmpfsState > 0 {
		state := filepath.Join(dir, "controller")
		if err := unix.Mount("tmpfs", state, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", lo.tmpfsState)); err != nil {
			return nil, fmt.Errorf("chaos: a tmpfs for the state directory: %w", err)
		}
		l.mounted = state
	}
	p, err := cluster.UpProcesses(ctx, cluster.ProcOptions{Lab: o.lab, Dir: dir, Exe: o.Exe,
		Users: []string{userAlice, userBob, userOpal}, Logger: l.log})
	if err != nil {
		l.unmount()
		return nil, err
	}
	l.p = p
	if err := l.setUp(ctx, lo); err != nil {
		l.down(context.WithoutCancel(ctx))
		return nil, err
	}
	return l, nil
}

func (l *lab) setUp(ctx context.Context, lo labOptions) error {
	var err error
	if l.key, err = auth.LoadKey(filepath.Join(l.dir, "controller", "cluster.key")); err != nil {
		return err
	}
	if l.ctl, err = adopt(l.dir, "controller"); err != nil {
		return err
	}
	if l.admin, err = l.client(ctx, "admin", auth.RoleAdmin); err != nil {
		return err
	}
	if len(lo.config) == 0 {
		return nil
	}
	path := filepath.Join(l.dir, "cluster.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(patchConfig(string(b), lo.config)), 0o644); err != nil {
		return err
	}
	return l.restartController(ctx, syscall.SIGTERM)
}

// patchConfig sets top-level keys of a cluster file: a "key: value" line
// at the start of a line is replaced, a missing key appended.
func patchConfig(text string, set map[string]string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		line := k + ": " + set[k]
		i := slices.IndexFunc(lines, func(s string) bool { return strings.HasPrefix(s, k+":") })
		if i >= 0 {
			lines[i] = line
		} else {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// token signs a token for user with role.
func (l *lab) token(user string, role auth.Role) string {
	tok, err := auth.Sign(l.key, auth.Claims{User: user, Role: role, IssuedAt: time.Now()})
	if err != nil {
		panic(fmt.Sprintf("chaos: sign a token: %v", err)) // the key was loaded: cannot happen
	}
	return tok
}

// expiredToken is a correctly signed token of user that expired an hour ago.
func (l *lab) expiredToken(user string) string {
	now := time.Now()
	tok, err := auth.Sign(l.key, auth.Claims{User: user, Role: auth.RoleUser, IssuedAt: now.Add(-2 * time.Hour), Expires: now.Add(-time.Hour)})
	if err != nil {
		panic(fmt.Sprintf("chaos: sign a token: %v", err))
	}
	return tok
}

// client dials the controller as user with role.
func (l *lab) client(ctx context.Context, user string, role auth.Role) (*client.Client, error) {
	return client.Dial(ctx, l.p.Addr, l.token(user, role))
}

// restartController stops the controller with sig (SIGKILL for a crash)
// and starts it again with the same command line on the same address and
// state directory, then waits until every node has registered again.
func (l *lab) restartController(ctx context.Context, sig syscall.Signal) error {
	if err := l.ctl.kill(ctx, sig); err != nil {
		return err
	}
	_, err := l.startController(ctx)
	if err != nil {
		return err
	}
	return l.waitNodes(ctx, time.Minute)
}

// startController starts the controller again after it died, on the
// lab's address, and returns how long it took to listen.
func (l *lab) startController(ctx context.Context) (time.Duration, error) {
	addrFile := filepath.Join(l.dir, cluster.RunDir, "controller.addr")
	os.Remove(addrFile)
	args := withFlag(withFlag(l.ctl.args, "--listen", l.p.Addr), "--address-file", addrFile)
	t0 := time.Now()
	var d *daemon
	var err error
	// The old listener's port is free once its process is gone; another
	// socket could take it in between, so a failed start is retried.
	for try := 0; try < 3; try++ {
		if d, err = spawn(l.dir, l.exe, "controller", args, l.ctl.env); err != nil {
			return 0, err
		}
		l.mu.Lock()
		l.started = append(l.started, d)
		l.mu.Unlock()
		l.ctl = d
		if err = waitAddr(ctx, d, addrFile, l.p.Addr); err == nil {
			return time.Since(t0), nil
		}
		l.log.Warn("controller restart failed", "try", try, "err", err)
	}
	return 0, err
}

// waitAddr waits until the controller wrote its address (it listens).
func waitAddr(ctx context.Context, d *daemon, file, want string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(file); err == nil && strings.HasSuffix(string(b), "\n") {
			if got := strings.TrimSpace(string(b)); got != want {
				return fmt.Errorf("chaos: the restarted controller listens on %s, not %s", got, want)
			}
			return nil
		}
		select {
		case <-d.done:
			return fmt.Errorf("chaos: the restarted controller exited at start")
		case <-ctx.Done():
			return fmt.Errorf("chaos: the restarted controller wrote no address: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// waitNodes polls until every lab node is registered and not down.
func (l *lab) waitNodes(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	want := len(l.p.Lab.NodeList())
	var last error
	for {
		nodes, err := l.admin.ListNodes(ctx, nil)
		up := 0
		for _, n := range nodes {
			if n.GetRegistered() && n.GetState() != "DOWN" {
				up++
			}
		}
		if err == nil && up == want {
			return nil
		}
		if err != nil {
			last = err
		} else {
			last = fmt.Errorf("%d of %d nodes up", up, want)
		}
		if err := clientenv.Sleep(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("chaos: nodes after a restart: %w (%v)", err, last)
		}
	}
}

// agent adopts the agent daemon of node.
func (l *lab) agent(node string) (*daemon, error) { return adopt(l.dir, "agent-"+node) }

// restartAgent starts an agent again as it was started.
func (l *lab) restartAgent(old *daemon) (*daemon, error) {
	exe := l.exe
	if old.exe != "" {
		exe = old.exe // the binary the lab ran it with (parity-agent on some nodes)
	}
	d, err := spawn(l.dir, exe, old.name, old.args, old.env)
	if d != nil {
		l.mu.Lock()
		l.extra = append(l.extra, d)
		l.mu.Unlock()
	}
	return d, err
}

// cancelAll cancels every unfinished job, several at a time, and waits
// until the controller sees none.
func (l *lab) cancelAll(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		jobs, err := l.admin.ListJobs(ctx, &pb.ListJobsRequest{})
		if err != nil {
			return fmt.Errorf("chaos: list jobs to cancel: %w", err)
		}
		if len(jobs) == 0 {
			return nil
		}
		ids := make([]uint64, 0, len(jobs))
		for _, j := range jobs {
			if !j.GetRequeuePending() && j.GetState() != "COMPLETING" {
				ids = append(ids, j.GetId())
			}
		}
		parallel(ctx, 8, len(ids), func(i int) { _, _ = l.admin.CancelJob(ctx, ids[i]) })
		if err := clientenv.Sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("chaos: %d jobs still unfinished: %w", len(jobs), err)
		}
	}
}

// cancelUsers cancels the unfinished jobs of users, several at a time,
// without waiting for them to end.
func (l *lab) cancelUsers(ctx context.Context, users ...string) error {
	jobs, err := l.admin.ListJobs(ctx, &pb.ListJobsRequest{Users: users})
	if err != nil {
		return fmt.Errorf("chaos: list jobs to cancel: %w", err)
	}
	parallel(ctx, 8, len(jobs), func(i int) { _, _ = l.admin.CancelJob(ctx, jobs[i].GetId()) })
	return ctx.Err()
}

// down stops the lab: jobs first, then the daemons this harness started,
// the lab's own, the controller, and the tmpfs.
func (l *lab) down(ctx context.Context) error {
	var errs []error
	if l.admin != nil && l.ctl != nil && l.ctl.alive() {
		errs = append(errs, l.cancelAll(ctx, time.Minute))
	}
	l.mu.Lock()
	extra, started := l.extra, l.started
	l.mu.Unlock()
	for _, d := range extra {
		errs = append(errs, d.kill(ctx, syscall.SIGTERM))
	}
	if l.p != nil {
		errs = append(errs, l.p.Down(ctx))
	}
	for _, d := range started {
		errs = append(errs, d.kill(ctx, syscall.SIGTERM))
	}
	if l.admin != nil {
		l.admin.Close()
	}
	if l.p != nil {
		errs = append(errs, cluster.RemoveCgroups(l.p.CgroupRoot))
	}
	errs = append(errs, l.unmount())
	return errors.Join(errs...)
}

func (l *lab) unmount() error {
	if l.mounted == "" {
		return nil
	}
	err := unix.Unmount(l.mounted, unix.MNT_DETACH)
	l.mounted = ""
	return err
}

// parallel runs f(0..n-1) on up to workers goroutines.
func parallel(ctx context.Context, workers, n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
