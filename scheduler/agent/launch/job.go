package launch

import (
	"path/filepath"
	"sync"
	"time"

	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/agent/shim"
)

// job is the runtime's view of one supervised job. mu guards every field.
type job struct {
	dir string
	// group is the job's cgroup (limits), step the batch step's below it;
	// both nil when the job runs without isolation.
	group, step cgroup.Group

	mu  sync.Mutex
	rec Record
	// pid is the job's first process (and process group), as the
	// supervisor reported it; 0 until it started.
	pid         int
	sup         *shim.Client // the supervisor it runs under
	timers      []Timer
	killTimer   Timer
	ended       bool
	gpus        map[string]*gpuAgg
	lastPersist time.Time
}

func (j *job) statusPath() string { return filepath.Join(j.dir, statusFile) }

// persist rewrites the state file; the caller holds mu.
func (j *job) persist(now time.Time) error {
	j.rec.GPUUsage = j.gpuUsage()
	j.lastPersist = now
	return writeRecord(filepath.Join(j.dir, stateFile), j.rec, false)
}

// create writes the state file's first version; the caller holds mu.
func (j *job) create(now time.Time) error {
	j.lastPersist = now
	return writeRecord(filepath.Join(j.dir, stateFile), j.rec, true)
}

// stopTimers cancels pending limit, signal and kill timers; mu held.
func (j *job) stopTimers() {
	for _, t := range j.timers {
		t.Stop()
	}
	j.timers = nil
	if j.killTimer != nil {
		j.killTimer.Stop()
		j.killTimer = nil
	}
}
