package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
)

// v1Required are the controllers isolation cannot do without; v1Optional
// only feed accounting or guard against fork bombs.
var (
	v1Required = []cgroup1.Name{cgroup1.Devices, cgroup1.Memory, cgroup1.Cpuset, cgroup1.Freezer}
	v1Optional = []cgroup1.Name{cgroup1.Cpuacct, cgroup1.Pids}
)

func newV1Manager(root string) (*Manager, error) {
	m := &Manager{mode: V1, v1Root: root}
	for _, n := range v1Required {
		if err := writable(filepath.Join(root, string(n))); err != nil {
			return nil, fmt.Errorf("%w: v1 %s controller at %s: %w", ErrUnavailable, n, filepath.Join(root, string(n)), err)
		}
	}
	for _, n := range v1Optional {
		if writable(filepath.Join(root, string(n))) != nil {
			m.missing = append(m.missing, string(n))
		}
	}
	_, err := os.Stat(filepath.Join(root, "memory", "memory.memsw.limit_in_bytes"))
	m.swap = err == nil
	return m, nil
}

// v1Subsystems are the hierarchies a job group spans: the required ones
// plus whichever optional ones the host has.
func (m *Manager) v1Subsystems() []cgroup1.Name {
	names := append([]cgroup1.Name(nil), v1Required...)
	for _, n := range v1Optional {
		if writable(filepath.Join(m.v1Root, string(n))) == nil {
			names = append(names, n)
		}
	}
	return names
}

func (m *Manager) v1Hierarchy() cgroup1.Hierarchy {
	return func() ([]cgroup1.Subsystem, error) {
		var subs []cgroup1.Subsystem
		for _, n := range m.v1Subsystems() {
			switch n {
			case cgroup1.Devices:
				subs = append(subs, cgroup1.NewDevices(m.v1Root))
			case cgroup1.Memory:
				subs = append(subs, cgroup1.NewMemory(m.v1Root, cgroup1.OptionalSwap()))
			case cgroup1.Cpuset:
				subs = append(subs, cgroup1.NewCpuset(m.v1Root))
			case cgroup1.Freezer:
				subs = append(subs, cgroup1.NewFreezer(m.v1Root))
			case cgroup1.Cpuacct:
				subs = append(subs, cgroup1.NewCpuacct(m.v1Root))
			case cgroup1.Pids:
				subs = append(subs, cgroup1.NewPids(m.v1Root))
			}
		}
		return subs, nil
	}
}

func (m *Manager) createV1(p string, r Resources) (Group, error) {
	cg, err := cgroup1.New(cgroup1.StaticPath(p), r.V1(m.swap), cgroup1.WithHierarchy(m.v1Hierarchy()))
	if err != nil {
		return nil, fmt.Errorf("cgroup: create v1 group %s: %w", p, err)
	}
	return &v1Group{m: m, path: p, cg: cg}, nil
}

func (m *Manager) loadV1(p string) (Group, error) {
	cg, err := cgroup1.Load(cgroup1.StaticPath(p), cgroup1.WithHierarchy(m.v1Hierarchy()))
	if err != nil {
		return nil, fmt.Errorf("cgroup: load v1 group %s: %w", p, err)
	}
	return &v1Group{m: m, path: p, cg: cg}, nil
}

type v1Group struct {
	m    *Manager
	path string
	cg   cgroup1.Cgroup
}

func (g *v1Group) Path() string { return g.path }

func (g *v1Group) dir(n cgroup1.Name) string { return filepath.Join(g.m.v1Root, string(n), g.path) }

func (g *v1Group) ProcsFiles() []string {
	var out []string
	for _, n := range g.m.v1Subsystems() {
		out = append(out, filepath.Join(g.dir(n), "cgroup.procs"))
	}
	return out
}

func (g *v1Group) Procs() ([]int, error) {
	// Every member joins every hierarchy, so the devices one (always
	// present) lists them all.
	procs, err := g.cg.Processes(cgroup1.Devices, true)
	if err != nil {
		return nil, fmt.Errorf("cgroup: list members of %s: %w", g.path, err)
	}
	seen := map[int]bool{}
	var out []int
	for _, p := range procs {
		if !seen[p.Pid] {
			seen[p.Pid] = true
			out = append(out, p.Pid)
		}
	}
	return out, nil
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
	if pids, err := g.Procs(); err == nil && len(pids) == 0 {
		return nil
	}
	var errs []error
	if err := g.cg.Freeze(); err != nil {
		errs = append(errs, fmt.Errorf("cgroup: freeze %s: %w", g.path, err))
	}
	pids, err := g.Procs()
	if err == nil {
		err = signalAll(pids, syscall.SIGKILL)
	}
	errs = append(errs, err)
	// A frozen task only acts on SIGKILL once thawed.
	if err := g.cg.Thaw(); err != nil {
		errs = append(errs, fmt.Errorf("cgroup: thaw %s: %w", g.path, err))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return waitEmpty(ctx, g)
}

func (g *v1Group) Stats() (Stats, error) {
	var st Stats
	mem := g.dir(cgroup1.Memory)
	if _, err := os.Stat(mem); err != nil {
		return Stats{}, fmt.Errorf("cgroup: stats of %s: %w", g.path, err)
	}
	if ns, ok := st.read(filepath.Join(g.dir(cgroup1.Cpuacct), "cpuacct.usage"), ""); ok {
		st.CPUTime = time.Duration(ns)
	}
	st.MemoryBytes, _ = st.read(filepath.Join(mem, "memory.usage_in_bytes"), "")
	st.MemoryPeakBytes, _ = st.read(filepath.Join(mem, "memory.max_usage_in_bytes"), "")
	st.MemoryLimitBytes, _ = st.read(filepath.Join(mem, "memory.limit_in_bytes"), "")
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
	cg, err := g.cg.New(name, r.V1(g.m.swap))
	if err != nil {
		return nil, fmt.Errorf("cgroup: create v1 group %s: %w", p, err)
	}
	return &v1Group{m: g.m, path: p, cg: cg}, nil
}

func (g *v1Group) Delete() error {
	if err := g.cg.Delete(); err != nil {
		return fmt.Errorf("cgroup: delete %s: %w", g.path, err)
	}
	return nil
}
