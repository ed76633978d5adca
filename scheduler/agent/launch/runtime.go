package launch

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/agent/shim"
	"github.com/parityhpc/parity/topology"
)

// Errors callers branch on.
var (
	ErrClosed     = errors.New("launch: runtime is closed")
	ErrUnknownJob = errors.New("launch: no such job on this node")
	ErrNotEnded   = errors.New("launch: job has not ended")
)

// DefaultKillWait is Slurm's KillWait: the time between SIGTERM and SIGKILL.
const DefaultKillWait = 30 * time.Second

// Config configures a Runtime.
type Config struct {
	// Node is this node's name: %N, SLURMD_NODENAME, and part of every
	// cgroup path (several simulated nodes may share a host).
	Node string
	// SpoolDir holds one directory per job (script, state, status) and
	// the supervisor's socket and log; absolute, and private to this node.
	SpoolDir string
	// Cgroups creates the job groups; nil runs jobs without isolation,
	// which New logs as an error.
	Cgroups *cgroup.Manager
	// CgroupRoot is the parent of every node's groups; default "/parity".
	CgroupRoot string
	// HostCPUs are the CPUs cpusets may use; empty reads them from the host.
	HostCPUs topology.CPUSet
	// Shim is the command that runs the node's supervisor (shim.Main);
	// "serve" is appended (e.g. ["/usr/bin/parity-shim"] or
	// ["/usr/bin/parity", "agent", "shim"]).
	Shim []string
	// KillWait is the time between SIGTERM and SIGKILL; 0 means
	// DefaultKillWait.
	KillWait time.Duration
	Clock    Clock
	Logger   *slog.Logger
	// LookupGroups returns the supplementary groups of a user when a Spec
	// does not carry them; default: the node's user database.
	LookupGroups func(name string, uid uint32) ([]uint32, error)
}

// Runtime launches and supervises the jobs of one node. It is safe for
// concurrent use. Jobs outlive the Runtime: Close only stops supervising,
// and a new Runtime over the same spool re-attaches with Reattach.
type Runtime struct {
	cfg      Config
	log      *slog.Logger
	hostCPUs topology.CPUSet
	box      *mailbox
	done     chan struct{} // closed by Close

	mu   sync.Mutex
	jobs map[uint64]*job
	// ended are jobs whose recorded end is not yet forgotten, as far as
	// this runtime has seen (Forget reads the record of any other).
	ended  map[uint64]bool
	closed bool
	busy   sync.WaitGroup // finishes and supervisor watchers in flight
	// sup is the connection to the node's supervisor; nil until the first
	// launch or re-attach, and again after the supervisor was lost.
	sup *shim.Client
	// held are allocations held here without a batch step (Hold).
	held heldDevices
}

// New checks the configuration, creates the spool and says loudly when
// jobs will run without isolation.
func New(cfg Config) (*Runtime, error) {
	if cfg.Node == "" {
		return nil, fmt.Errorf("launch: config node is empty")
	}
	if !filepath.IsAbs(cfg.SpoolDir) {
		return nil, fmt.Errorf("launch: config spoolDir %q is not absolute", cfg.SpoolDir)
	}
	if len(cfg.Shim) == 0 || !filepath.IsAbs(cfg.Shim[0]) {
		return nil, fmt.Errorf("launch: config shim %q must start with an absolute path", cfg.Shim)
	}
	if cfg.CgroupRoot == "" {
		cfg.CgroupRoot = "/parity"
	}
	if cfg.KillWait <= 0 {
		cfg.KillWait = DefaultKillWait
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LookupGroups == nil {
		cfg.LookupGroups = lookupGroups
	}
	// Jobs exec their script from the spool as their own user, so every
	// level must be searchable (not listable) by others.
	if err := os.MkdirAll(cfg.SpoolDir, 0o711); err != nil {
		return nil, fmt.Errorf("launch: create spool %s: %w", cfg.SpoolDir, err)
	}
	if err := os.Chmod(cfg.SpoolDir, 0o711); err != nil {
		return nil, fmt.Errorf("launch: spool %s: %w", cfg.SpoolDir, err)
	}
	r := &Runtime{cfg: cfg, log: cfg.Logger.With("node", cfg.Node), jobs: map[uint64]*job{}, ended: map[uint64]bool{}, hostCPUs: cfg.HostCPUs}
	if r.hostCPUs.IsEmpty() {
		cpus, err := cgroup.HostCPUs(cfg.Cgroups)
		if err != nil {
			return nil, err
		}
		r.hostCPUs = cpus
	}
	r.done = make(chan struct{})
	r.box = newMailbox()
	if cfg.Cgroups == nil {
		r.log.Error("cgroups unavailable: jobs run WITHOUT cpuset, memory limit or device isolation; OUT_OF_MEMORY cannot be detected and only the process group is killed on cancel")
	} else {
		r.log.Info("job isolation", "cgroup", cfg.Cgroups.Mode().String(), "root", cfg.CgroupRoot, "hostCPUs", r.hostCPUs.String(),
			"shim", cfg.Shim[0])
		if miss := cfg.Cgroups.Missing(); len(miss) > 0 {
			r.log.Warn("optional cgroup controllers missing; their counters are not recorded", "missing", miss)
		}
	}
	return r, nil
}

// Events delivers each job's end once per Runtime, at least once overall:
// an end not yet passed to Forget is delivered again after a restart.
// The channel is closed by Close.
func (r *Runtime) Events() <-chan JobEnd { return r.box.out }

// JobInfo describes a running job.
type JobInfo struct {
	JobID    uint64            `json:"jobId"`
	Run      int32             `json:"run,omitempty"`
	Pid      int               `json:"pid,omitempty"`
	Started  time.Time         `json:"started"`
	Deadline time.Time         `json:"deadline,omitzero"`
	CPUs     cgroup.CPUMapping `json:"cpus"`
	Group    string            `json:"group,omitempty"`
	Isolated bool              `json:"isolated"`
	GPUs     []string          `json:"gpus,omitempty"`
	// Ending is the state the runtime is ending the job with, if any.
	Ending accounting.JobState `json:"ending,omitempty"`
}

// Running lists the supervised jobs by id.
func (r *Runtime) Running() []JobInfo {
	jobs := r.snapshot()
	out := make([]JobInfo, 0, len(jobs))
	for _, j := range jobs {
		j.mu.Lock()
		rec, ended, pid := j.rec, j.ended, j.pid
		j.mu.Unlock()
		if ended {
			continue
		}
		out = append(out, JobInfo{JobID: rec.Spec.JobID, Run: rec.Spec.Run, Pid: pid, Started: rec.Started, Deadline: rec.Deadline,
			CPUs: rec.CPUs, Group: rec.JobGroup, Isolated: rec.Isolated, GPUs: rec.Spec.GPUs, Ending: rec.Ending})
	}
	slices.SortFunc(out, func(a, b JobInfo) int { return compareUint(a.JobID, b.JobID) })
	return out
}

// RunOf reports which run of a job this node has, running or ended and
// not yet forgotten.
func (r *Runtime) RunOf(jobID uint64) (int32, bool) {
	r.mu.Lock()
	j, ok := r.jobs[jobID]
	r.mu.Unlock()
	if ok {
		j.mu.Lock()
		defer j.mu.Unlock()
		return j.rec.Spec.Run, true
	}
	rec, err := readRecord(filepath.Join(r.jobDir(jobID), stateFile))
	if err != nil {
		return 0, false
	}
	return rec.Spec.Run, true
}

// Forget drops an ended job's record and spool directory, once its end
// has been handed on (to the controller). Forgetting an unknown job is a
// no-op; a running one is an error.
func (r *Runtime) Forget(jobID uint64) error {
	r.mu.Lock()
	_, running := r.jobs[jobID]
	known := r.ended[jobID]
	delete(r.ended, jobID)
	r.mu.Unlock()
	if running {
		return fmt.Errorf("%w: job %d", ErrNotEnded, jobID)
	}
	dir := r.jobDir(jobID)
	if !known {
		rec, err := readRecord(filepath.Join(dir, stateFile))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err == nil && rec.End == nil {
			return fmt.Errorf("%w: job %d", ErrNotEnded, jobID)
		}
	}
	if err := removeJobDir(dir); err != nil {
		return fmt.Errorf("launch: forget job %d: %w", jobID, err)
	}
	return nil
}

// removeJobDir removes a job's spool directory: the files the runtime and
// the supervisor write there by name, then the directory, and only if
// something else is left, a walk of it (a listing costs more system calls
// than the whole rest of it).
func removeJobDir(dir string) error {
	for _, f := range []string{stateFile, "." + stateFile + ".tmp", statusFile, scriptFile} {
		unix.Unlink(filepath.Join(dir, f))
	}
	err := unix.Rmdir(dir)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return os.RemoveAll(dir)
}

// Close stops supervising: timers are stopped and watchers return, but the
// jobs keep running under the node's supervisor for the next Runtime to
// re-attach.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	for _, j := range r.snapshot() {
		j.mu.Lock()
		j.stopTimers()
		j.mu.Unlock()
	}
	close(r.done)
	r.mu.Lock()
	sup := r.sup
	r.sup = nil
	r.mu.Unlock()
	if sup != nil {
		sup.Close()
	}
	r.busy.Wait()
	r.box.close()
	return nil
}

// snapshot lists the supervised jobs; callers lock each job themselves
// (never r.mu while holding a job's mu).
func (r *Runtime) snapshot() []*job {
	r.mu.Lock()
	defer r.mu.Unlock()
	jobs := make([]*job, 0, len(r.jobs))
	for _, j := range r.jobs {
		jobs = append(jobs, j)
	}
	return jobs
}

// enter registers in-flight work unless the runtime is closed.
func (r *Runtime) enter() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.busy.Add(1)
	return true
}

func (r *Runtime) lookup(jobID uint64) (*job, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	j, ok := r.jobs[jobID]
	if !ok {
		return nil, fmt.Errorf("%w: job %d", ErrUnknownJob, jobID)
	}
	return j, nil
}

// Spool layout.
const (
	stateFile  = "state.json"
	statusFile = "status.json"
	scriptFile = "script"
	// The node's supervisor: its socket (root only) and its log.
	supervisorSocket = "shim.sock"
	supervisorLog    = "shim.log"
)

func (r *Runtime) jobDir(id uint64) string {
	return filepath.Join(r.cfg.SpoolDir, "job_"+strconv.FormatUint(id, 10))
}

func (r *Runtime) groupPath(id uint64) string {
	return r.cfg.CgroupRoot + "/" + r.cfg.Node + "/job_" + strconv.FormatUint(id, 10)
}

func lookupGroups(name string, uid uint32) ([]uint32, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil && name != "" {
		u, err = user.Lookup(name)
	}
	if err != nil {
		return nil, fmt.Errorf("launch: look up user %q (uid %d): %w", name, uid, err)
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("launch: groups of user %q: %w", u.Username, err)
	}
	out := make([]uint32, 0, len(ids))
	for _, s := range ids {
		g, err := strconv.ParseUint(s, 10, 32)
		if err == nil {
			out = append(out, uint32(g))
		}
	}
	return out, nil
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
