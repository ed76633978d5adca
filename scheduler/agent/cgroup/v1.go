package cgroup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/parityhpc/parity/scheduler/agent/ctlfile"
)

// v1 hierarchy (controller) names.
const (
	v1Devices = "devices"
	v1Memory  = "memory"
	v1Cpuset  = "cpuset"
	v1Freezer = "freezer"
	v1Cpuacct = "cpuacct"
	v1Pids    = "pids"
)

// v1Required are the controllers isolation cannot do without; v1Optional
// only feed accounting or guard against fork bombs.
var (
	v1Required = []string{v1Devices, v1Memory, v1Cpuset, v1Freezer}
	v1Optional = []string{v1Cpuacct, v1Pids}
)

func newV1Manager(root string) (*Manager, error) {
	m := &Manager{mode: V1, v1Root: root}
	for _, n := range v1Required {
		if err := writable(filepath.Join(root, n)); err != nil {
			return nil, fmt.Errorf("%w: v1 %s controller at %s: %w", ErrUnavailable, n, filepath.Join(root, n), err)
		}
	}
	m.v1Subs = append([]string(nil), v1Required...)
	for _, n := range v1Optional {
		if writable(filepath.Join(root, n)) != nil {
			m.missing = append(m.missing, n)
		} else {
			m.v1Subs = append(m.v1Subs, n)
		}
	}
	_, err := os.Stat(filepath.Join(root, v1Memory, "memory.memsw.limit_in_bytes"))
	m.swap = err == nil
	return m, nil
}

// v1Subsystems are the hierarchies a job group spans: the required ones
// plus whichever optional ones the host had when the manager was made.
func (m *Manager) v1Subsystems() []string { return m.v1Subs }

// The v1 groups are driven with plain mkdir, writes and rmdir rather than
// containerd's cgroup1: its New walks every cpuset ancestor and its Delete
// walks every file of every hierarchy to look for members, which made group
// set-up and tear-down most of the agent's CPU per job.

func (m *Manager) createV1(p string, r Resources) (Group, error) {
	g := &v1Group{m: m, path: p}
	if err := g.create(r); err != nil {
		return nil, err
	}
	return g, nil
}

func (m *Manager) loadV1(p string) (Group, error) {
	g := &v1Group{m: m, path: p}
	if _, err := os.Stat(g.dir(v1Devices)); err != nil {
		return nil, fmt.Errorf("cgroup: load v1 group %s: %w", p, err)
	}
	return g, nil
}

type v1Group struct {
	m    *Manager
	path string
}

func (g *v1Group) Path() string { return g.path }

func (g *v1Group) dir(n string) string { return filepath.Join(g.m.v1Root, n, g.path) }

// create makes the group in every hierarchy and writes its limits. Device
// rules go in their order (deny all first); the memory limit before the
// memory+swap one, which may never be below it.
func (g *v1Group) create(r Resources) error {
	for _, n := range g.m.v1Subsystems() {
		if err := g.m.mkdirV1(n, g.path); err != nil {
			return fmt.Errorf("cgroup: create v1 group %s: %w", g.path, err)
		}
	}
	// Consecutive rules of one verb go through one open of its file.
	type write struct {
		file   string
		values []string
	}
	var writes []write
	add := func(file string, values ...string) { writes = append(writes, write{file, values}) }
	for _, d := range r.Devices {
		file := filepath.Join(g.dir(v1Devices), "devices.deny")
		if d.Allow {
			file = filepath.Join(g.dir(v1Devices), "devices.allow")
		}
		rule := d.String()
		rule = rule[strings.IndexByte(rule, ' ')+1:] // "c 195:2 rw" without the verb
		if n := len(writes); n > 0 && writes[n-1].file == file {
			writes[n-1].values = append(writes[n-1].values, rule)
		} else {
			add(file, rule)
		}
	}
	if !r.CPUs.IsEmpty() {
		add(filepath.Join(g.dir(v1Cpuset), "cpuset.cpus"), r.CPUs.String())
	}
	if r.Mems != "" {
		add(filepath.Join(g.dir(v1Cpuset), "cpuset.mems"), r.Mems)
	}
	if r.MemoryLimit > 0 {
		limit := strconv.FormatInt(r.MemoryLimit, 10)
		add(filepath.Join(g.dir(v1Memory), "memory.limit_in_bytes"), limit)
		if g.m.swap {
			add(filepath.Join(g.dir(v1Memory), "memory.memsw.limit_in_bytes"), limit)
		}
	}
	if r.PidsLimit > 0 {
		add(filepath.Join(g.dir(v1Pids), "pids.max"), strconv.FormatInt(r.PidsLimit, 10))
	}
	for _, w := range writes {
		if err := ctlfile.WriteEach(w.file, w.values...); err != nil {
			return fmt.Errorf("cgroup: create v1 group %s: %w", g.path, err)
		}
	}
	return nil
}

// mkdirV1 creates p in hierarchy n, making missing parents. A new cpuset
// group starts with no CPUs and no memory nodes (no task could run in it)
// unless its parent has cgroup.clone_children set, when the kernel copies
// the parent's. Each group made here is given its parent's values if the
// kernel did not, and the flag, so that groups below it (every job's and
// step's) are filled in by the kernel: one read instead of two reads and
// two writes a group. Limits written afterwards narrow them.
func (m *Manager) mkdirV1(n, p string) error {
	dir := filepath.Join(m.v1Root, n, p)
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrNotExist) && p != "/" {
		if err := m.mkdirV1(n, filepath.Dir(p)); err != nil {
			return err
		}
		err = os.Mkdir(dir, 0o755)
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil
	case err != nil:
		return err
	case n == v1Cpuset:
		if mems, err := ctlfile.ReadValue(filepath.Join(dir, "cpuset.mems")); err == nil && len(strings.TrimSpace(string(mems))) > 0 {
			return nil
		}
		if err := m.inheritCpuset(dir, true); err != nil {
			return err
		}
		return ctlfile.Write(filepath.Join(dir, "cgroup.clone_children"), "1")
	}
	return nil
}

// inheritCpuset gives an empty cpuset group its parent's CPUs and memory
// nodes. A parent may itself still be empty: another launch on the same
// node may have just made it and not yet filled it in, so it is filled in
// here too (the same values either way), up to the hierarchy's root.
// fresh says dir was just made (so it is known to be empty).
func (m *Manager) inheritCpuset(dir string, fresh bool) error {
	root := filepath.Join(m.v1Root, v1Cpuset)
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		if !fresh {
			own, err := ctlfile.Read(filepath.Join(dir, f))
			if err != nil {
				return err
			}
			if len(strings.TrimSpace(string(own))) > 0 {
				continue
			}
		}
		parent := filepath.Dir(dir)
		v, err := ctlfile.Read(filepath.Join(parent, f))
		if err != nil {
			return err
		}
		if len(strings.TrimSpace(string(v))) == 0 && parent != root && strings.HasPrefix(parent, root) {
			if err := m.inheritCpuset(parent, false); err != nil {
				return err
			}
			if v, err = ctlfile.Read(filepath.Join(parent, f)); err != nil {
				return err
			}
		}
		if val := strings.TrimSpace(string(v)); val != "" {
			if err := ctlfile.Write(filepath.Join(dir, f), val); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *v1Group) ProcsFiles() []string {
	subs := g.m.v1Subsystems()
	out := make([]string, 0, len(subs))
	for _, n := range subs {
		out = append(out, filepath.Join(g.dir(n), "cgroup.procs"))
	}
	return out
}

func (g *v1Group) Procs() ([]int, error) {
	// Every member joins every hierarchy, so the devices one (always
	// present) lists them all.
	seen := map[int]bool{}
	var out []int
	if err := procsBelow(g.dir(v1Devices), seen, &out); err != nil {
		return nil, fmt.Errorf("cgroup: list members of %s: %w", g.path, err)
	}
	return out, nil
}

// procsBelow adds the members of the group at dir and of its sub-groups.
func procsBelow(dir string, seen map[int]bool, out *[]int) error {
	b, err := ctlfile.Read(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return err
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
			seen[pid] = true
			*out = append(*out, pid)
		}
	}
	for _, d := range subGroups(dir) {
		if err := procsBelow(d, seen, out); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// subGroups lists the sub-group directories of a group directory.
func subGroups(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// empty reports whether the group (sub-groups included) has no member:
// the pids hierarchy's hierarchical task count answers in one read,
// where listing members reads every level's cgroup.procs and directory.
// A task that has exited but is not yet reaped still counts there, so
// "not empty" is checked again by listing.
func (g *v1Group) empty() bool {
	if slices.Contains(g.m.v1Subsystems(), v1Pids) {
		if n, ok := readCounter(filepath.Join(g.dir(v1Pids), "pids.current"), ""); ok && n == 0 {
			return true
		}
	}
	pids, err := g.Procs()
	return err == nil && len(pids) == 0
}

func (g *v1Group) Signal(sig syscall.Signal) error {
	pids, err := g.Procs()
	if err != nil {
		return err
	}
	return signalAll(pids, sig)
}

func (g *v1Group) Kill(ctx context.Context) error {
	// A group already empty (the usual end: the shim swept it) is left
	// alone: nothing can join it but the agent, and the freeze/thaw round
	// trip polls freezer.state, which costs every job end milliseconds
	// of CPU and more of latency on a busy node.
	if g.empty() {
		return nil
	}
	var errs []error
	if err := g.freeze(ctx); err != nil {
		errs = append(errs, fmt.Errorf("cgroup: freeze %s: %w", g.path, err))
	}
	pids, err := g.Procs()
	if err == nil {
		err = signalAll(pids, syscall.SIGKILL)
	}
	errs = append(errs, err)
	// A frozen task only acts on SIGKILL once thawed.
	if err := ctlfile.Write(filepath.Join(g.dir(v1Freezer), "freezer.state"), "THAWED"); err != nil {
		errs = append(errs, fmt.Errorf("cgroup: thaw %s: %w", g.path, err))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return waitEmpty(ctx, g)
}

// freeze asks for FROZEN until the kernel reports it: the state passes
// through FREEZING while tasks are being stopped.
func (g *v1Group) freeze(ctx context.Context) error {
	state := filepath.Join(g.dir(v1Freezer), "freezer.state")
	for {
		if err := ctlfile.Write(state, "FROZEN"); err != nil {
			return err
		}
		b, err := ctlfile.Read(state)
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(b)) == "FROZEN" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

func (g *v1Group) Stats() (Stats, error) {
	st, err := g.FinalStats()
	if err != nil {
		return st, err
	}
	mem := g.dir(v1Memory)
	st.MemoryBytes, _ = st.read(filepath.Join(mem, "memory.usage_in_bytes"), "")
	st.MemoryLimitBytes, _ = st.read(filepath.Join(mem, "memory.limit_in_bytes"), "")
	return st, nil
}

func (g *v1Group) FinalStats() (Stats, error) {
	var st Stats
	mem := g.dir(v1Memory)
	if ns, ok := st.read(filepath.Join(g.dir(v1Cpuacct), "cpuacct.usage"), ""); ok {
		st.CPUTime = time.Duration(ns)
	}
	peak, ok := st.read(filepath.Join(mem, "memory.max_usage_in_bytes"), "")
	if !ok {
		if _, err := os.Stat(mem); err != nil {
			return Stats{}, fmt.Errorf("cgroup: stats of %s: %w", g.path, err)
		}
	}
	st.MemoryPeakBytes = peak
	st.OOMKills, _ = st.read(filepath.Join(mem, "memory.oom_control"), "oom_kill")
	return st, nil
}

func (g *v1Group) Child(name string, r Resources) (Group, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	p, err := cleanGroupPath(g.path + "/" + name)
	if err != nil {
		return nil, err
	}
	c := &v1Group{m: g.m, path: p}
	if err := c.create(r); err != nil {
		return nil, err
	}
	return c, nil
}

// Delete removes the group, its (empty) sub-groups first, in every
// hierarchy; the kernel refuses while a member remains. A hierarchy where
// the group is already gone is skipped.
func (g *v1Group) Delete() error {
	var busy []string
	for _, n := range g.m.v1Subsystems() {
		if err := rmdirTree(g.dir(n)); err != nil {
			busy = append(busy, fmt.Sprintf("%s (%v)", n, err))
		}
	}
	if len(busy) > 0 {
		return fmt.Errorf("cgroup: delete %s: %s", g.path, strings.Join(busy, ", "))
	}
	return nil
}

// rmdirTree removes a group directory and its sub-group directories
// (their files are the kernel's and go with them).
func rmdirTree(dir string) error {
	err := syscall.Rmdir(dir)
	switch {
	case err == nil, errors.Is(err, syscall.ENOENT):
		return nil
	case !errors.Is(err, syscall.EBUSY) && !errors.Is(err, syscall.ENOTEMPTY):
		return err
	}
	subs := subGroups(dir)
	if len(subs) == 0 {
		return fmt.Errorf("%w: it still has members", err)
	}
	for _, s := range subs {
		if err := rmdirTree(s); err != nil {
			return err
		}
	}
	if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("%w: it still has members", err)
	}
	return nil
}
