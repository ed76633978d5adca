package cgroup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3/cgroup2"
)

// v2Resources is r for cgroup2, with the memory controller enabled even
// without a limit where the root offers it: v2 keeps memory.current and
// memory.peak only in groups that have it, and accounting needs them for
// every job.
func (m *Manager) v2Resources(r Resources) *cgroup2.Resources {
	out := r.V2()
	if out.Memory == nil && m.v2Mem {
		out.Memory = &cgroup2.Memory{}
	}
	return out
}

func (m *Manager) createV2(p string, r Resources) (Group, error) {
	mg, err := cgroup2.NewManager(m.v2Mount, p, m.v2Resources(r))
	if err != nil {
		return nil, fmt.Errorf("cgroup: create v2 group %s under %s: %w", p, m.v2Mount, err)
	}
	return &v2Group{m: m, path: p, mg: mg}, nil
}

// loadV2 opens an existing group: cgroup2.Load does not look, and a
// group that is gone must not come back as an empty one (as on v1).
func (m *Manager) loadV2(p string) (Group, error) {
	if _, err := os.Stat(filepath.Join(m.v2Mount, p)); err != nil {
		return nil, fmt.Errorf("cgroup: load v2 group %s: %w", p, err)
	}
	mg, err := cgroup2.Load(p, cgroup2.WithMountpoint(m.v2Mount))
	if err != nil {
		return nil, fmt.Errorf("cgroup: load v2 group %s under %s: %w", p, m.v2Mount, err)
	}
	return &v2Group{m: m, path: p, mg: mg}, nil
}

type v2Group struct {
	m    *Manager
	path string
	mg   *cgroup2.Manager
}

func (g *v2Group) Path() string { return g.path }

func (g *v2Group) dir() string { return filepath.Join(g.m.v2Mount, g.path) }

func (g *v2Group) ProcsFiles() []string { return []string{filepath.Join(g.dir(), "cgroup.procs")} }

func (g *v2Group) Procs() ([]int, error) {
	pids, err := g.mg.Procs(true)
	if err != nil {
		return nil, fmt.Errorf("cgroup: list members of %s: %w", g.path, err)
	}
	out := make([]int, len(pids))
	for i, p := range pids {
		out[i] = int(p)
	}
	return out, nil
}

func (g *v2Group) Signal(sig syscall.Signal) error {
	pids, err := g.Procs()
	if err != nil {
		return err
	}
	return signalAll(pids, sig)
}

// Kill writes cgroup.kill (kernel 5.14+), which the kernel applies to the
// whole subtree atomically; the library falls back to freeze-and-sweep.
func (g *v2Group) Kill(ctx context.Context) error {
	if err := g.mg.Kill(); err != nil {
		return fmt.Errorf("cgroup: kill %s: %w", g.path, err)
	}
	return waitEmpty(ctx, g)
}

func (g *v2Group) Stats() (Stats, error) {
	var st Stats
	if us, ok := st.read(filepath.Join(g.dir(), "cpu.stat"), "usage_usec"); ok {
		st.CPUTime = time.Duration(us) * time.Microsecond
	}
	if _, ok := readCounter(filepath.Join(g.dir(), "cgroup.procs"), ""); !ok {
		if _, err := filepath.Glob(g.dir()); err != nil {
			return Stats{}, fmt.Errorf("cgroup: stats of %s: %w", g.path, err)
		}
	}
	st.MemoryBytes, _ = st.read(filepath.Join(g.dir(), "memory.current"), "")
	st.MemoryPeakBytes, _ = st.read(filepath.Join(g.dir(), "memory.peak"), "")
	st.MemoryLimitBytes, _ = st.read(filepath.Join(g.dir(), "memory.max"), "")
	st.OOMKills, _ = st.read(filepath.Join(g.dir(), "memory.events"), "oom_kill")
	return st, nil
}

// FinalStats reads them all: v2 keeps them in fewer files.
func (g *v2Group) FinalStats() (Stats, error) { return g.Stats() }

func (g *v2Group) Child(name string, r Resources) (Group, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	p, err := cleanGroupPath(g.path + "/" + name)
	if err != nil {
		return nil, err
	}
	mg, err := g.mg.NewChild(name, g.m.v2Resources(r))
	if err != nil {
		return nil, fmt.Errorf("cgroup: create v2 group %s: %w", p, err)
	}
	return &v2Group{m: g.m, path: p, mg: mg}, nil
}

func (g *v2Group) Delete() error {
	if err := g.mg.Delete(); err != nil {
		return fmt.Errorf("cgroup: delete %s: %w", g.path, err)
	}
	return nil
}
