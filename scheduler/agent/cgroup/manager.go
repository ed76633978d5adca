package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	cgroups "github.com/containerd/cgroups/v3"
)

// ErrUnavailable is returned when the host has no usable cgroup hierarchy.
var ErrUnavailable = errors.New("cgroup: no usable cgroup hierarchy")

// Mode is the cgroup flavour a Manager drives.
type Mode int

// Modes. V1 covers Legacy and Hybrid hosts, where the resource controllers
// live in v1 hierarchies even though a cgroup2 mount exists.
const (
	Unavailable Mode = iota
	V1
	V2
)

func (m Mode) String() string {
	switch m {
	case V1:
		return "v1"
	case V2:
		return "v2"
	}
	return "unavailable"
}

// Group is one control group: a job, or a step below it. Implementations
// are safe for concurrent use; a Group value stays valid after Delete (its
// calls then fail).
type Group interface {
	// Path is the group's path relative to each hierarchy root ("/parity/n1/job_7").
	Path() string
	// ProcsFiles are the cgroup.procs files a process id must be written
	// to (one per v1 hierarchy, one on v2) to join the group.
	ProcsFiles() []string
	// Procs lists the member processes, sub-groups included.
	Procs() ([]int, error)
	// Signal sends sig to every member process.
	Signal(sig syscall.Signal) error
	// Kill freezes the group, SIGKILLs every member, thaws it and waits
	// until the group is empty or ctx ends. Freezing first stops members
	// from forking new ones during the sweep. An empty group is left as
	// it is.
	Kill(ctx context.Context) error
	// Stats reads CPU time, memory and OOM counters.
	Stats() (Stats, error)
	// FinalStats reads what accounting keeps once the members are gone:
	// CPU time, peak memory and OOM kills (not current memory or limit).
	FinalStats() (Stats, error)
	// Child creates (or reopens) a sub-group, e.g. a job step.
	Child(name string, r Resources) (Group, error)
	// Delete removes the group; it fails while processes remain.
	Delete() error
}

// Manager creates and loads groups under one hierarchy root.
type Manager struct {
	mode    Mode
	v1Root  string   // where the v1 controllers are mounted
	v1Subs  []string // the v1 hierarchies a group spans
	v2Mount string   // the cgroup2 mount point
	v2Mem   bool     // the cgroup2 root offers the memory controller
	swap    bool     // v1 memory.memsw.* exists
	missing []string
}

// Detect picks the host's mode: v1 on Legacy and Hybrid hosts (the
// resource controllers are there), v2 on Unified ones. The string says why,
// for the loud start-up message when isolation is unavailable.
func Detect() (Mode, string) {
	switch cgroups.Mode() {
	case cgroups.Legacy:
		return V1, "cgroup v1 (legacy hierarchy)"
	case cgroups.Hybrid:
		return V1, "cgroup v1 controllers (hybrid host; cgroup2 holds no resource controllers)"
	case cgroups.Unified:
		return V2, "cgroup v2 (unified hierarchy)"
	}
	return Unavailable, "no cgroup filesystem mounted at /sys/fs/cgroup"
}

// NewManager returns a manager for mode with the standard mount points.
// It fails with ErrUnavailable when mode is Unavailable or a required
// controller (devices, memory, cpuset, freezer on v1) is missing or not
// writable, naming which.
func NewManager(mode Mode) (*Manager, error) {
	switch mode {
	case V1:
		return newV1Manager("/sys/fs/cgroup")
	case V2:
		return NewV2Manager("/sys/fs/cgroup")
	}
	return nil, fmt.Errorf("%w: mode %s", ErrUnavailable, mode)
}

// NewV2Manager drives the cgroup2 hierarchy mounted at mount (on a Hybrid
// host: /sys/fs/cgroup/unified, where only device filtering works).
func NewV2Manager(mount string) (*Manager, error) {
	if err := writable(mount); err != nil {
		return nil, fmt.Errorf("%w: cgroup2 at %s: %w", ErrUnavailable, mount, err)
	}
	m := &Manager{mode: V2, v2Mount: mount}
	m.v2Mem = slices.Contains(m.V2Controllers(), "memory")
	return m, nil
}

// Mode returns the manager's mode.
func (m *Manager) Mode() Mode { return m.mode }

// Missing names optional controllers the host lacks (their limits are not
// enforced), so the agent can say so at start.
func (m *Manager) Missing() []string { return append([]string(nil), m.missing...) }

// V2Controllers lists the controllers the v2 root can delegate.
func (m *Manager) V2Controllers() []string {
	b, err := os.ReadFile(filepath.Join(m.v2Mount, "cgroup.controllers"))
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// Create makes the group at p (absolute, e.g. "/parity/node1/job_7") with
// the resources; parents are created as needed and inherit everything.
func (m *Manager) Create(p string, r Resources) (Group, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	p, err := cleanGroupPath(p)
	if err != nil {
		return nil, err
	}
	switch m.mode {
	case V1:
		return m.createV1(p, r)
	case V2:
		return m.createV2(p, r)
	}
	return nil, ErrUnavailable
}

// Load reopens an existing group (after an agent restart).
func (m *Manager) Load(p string) (Group, error) {
	p, err := cleanGroupPath(p)
	if err != nil {
		return nil, err
	}
	switch m.mode {
	case V1:
		return m.loadV1(p)
	case V2:
		return m.loadV2(p)
	}
	return nil, ErrUnavailable
}

func cleanGroupPath(p string) (string, error) {
	if !strings.HasPrefix(p, "/") || strings.Contains(p, "..") || path.Clean(p) == "/" {
		return "", fmt.Errorf("cgroup: group path %q must be absolute, below the root and without ..", p)
	}
	return path.Clean(p), nil
}

func writable(dir string) error {
	return syscall.Access(dir, 2 /* W_OK */)
}

// waitEmpty polls the member list until it is empty or ctx ends. The
// kernel gives no portable v1 notification for "group became empty", so a
// short poll with backoff is the honest way.
func waitEmpty(ctx context.Context, g Group) error {
	delay := time.Millisecond
	for {
		pids, err := g.Procs()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cgroup: %s still holds pids %v: %w", g.Path(), pids, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, 50*time.Millisecond)
	}
}

func signalAll(pids []int, sig syscall.Signal) error {
	var errs []error
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("cgroup: signal %d to pid %d: %w", sig, pid, err))
		}
	}
	return errors.Join(errs...)
}
