package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parityhpc/parity/scheduler/agent/shim"
)

// Reattach scans the spool after a restart: jobs the node's supervisor
// still runs are supervised again (their limits re-armed from the
// recorded deadline), jobs that ended while no agent watched are finished
// from the status the supervisor left, and ends not yet forgotten are
// delivered again. It returns the ids of the jobs it re-attached to, in
// order.
func (r *Runtime) Reattach(ctx context.Context) ([]uint64, error) {
	entries, err := os.ReadDir(r.cfg.SpoolDir)
	if err != nil {
		return nil, fmt.Errorf("launch: read spool %s: %w", r.cfg.SpoolDir, err)
	}
	sup, err := r.supervisor()
	if err != nil {
		return nil, err
	}
	// Asked after connecting: a job that ends from now on is announced on
	// this connection; one that ended before has its status file.
	running, err := runningUnder(ctx, sup)
	if err != nil {
		return nil, err
	}
	var attached []uint64
	var errs []error
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return attached, err
		}
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "job_") {
			continue
		}
		dir := filepath.Join(r.cfg.SpoolDir, e.Name())
		rec, err := readRecord(filepath.Join(dir, stateFile))
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, errTornRecord) {
			continue // a launch that died before or while writing its first record; nothing ran
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pid, ok := running[rec.Spec.JobID]
		if r.reattach(dir, rec, sup, pid, ok) {
			attached = append(attached, rec.Spec.JobID)
		}
	}
	slices.Sort(attached)
	return attached, errors.Join(errs...)
}

// reattach takes one recorded job back; it reports whether the job is
// still running and now supervised.
func (r *Runtime) reattach(dir string, rec Record, sup *shim.Client, pid int, runs bool) bool {
	id := rec.Spec.JobID
	if rec.End != nil {
		r.mu.Lock()
		r.ended[id] = true
		r.mu.Unlock()
		r.box.put(*rec.End)
		return false
	}
	j := &job{dir: dir, rec: rec, gpus: newGPUAggs(rec.Spec.GPUs, rec.GPUUsage), pid: pid, sup: sup}
	var loadErr error
	if rec.Isolated && r.cfg.Cgroups != nil {
		if j.group, loadErr = r.cfg.Cgroups.Load(rec.JobGroup); loadErr == nil {
			j.step, loadErr = r.cfg.Cgroups.Load(rec.StepGroup)
		}
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return false
	}
	if _, dup := r.jobs[id]; dup {
		r.mu.Unlock()
		return false
	}
	r.jobs[id] = j
	r.mu.Unlock()
	if !runs {
		// Ended while no agent watched (its status says how), or its
		// supervisor is gone with the node or on its own (lost).
		if loadErr != nil {
			r.log.Warn("job group gone", "job", id, "err", loadErr)
		}
		r.finish(j)
		return false
	}
	if loadErr != nil {
		r.log.Error("re-attached job runs but its cgroup could not be loaded; limits still hold, counters are lost", "job", id, "err", loadErr)
	}
	j.mu.Lock()
	r.armTimers(j)
	j.mu.Unlock()
	// Its end may have been announced before the job was known here; the
	// status file has it then.
	if st, err := shim.ReadStatus(j.statusPath()); err == nil && st.Done {
		r.finish(j)
		return false
	}
	r.log.Info("re-attached to running job", "job", id, "pid", pid, "deadline", rec.Deadline, "ending", rec.Ending)
	return true
}

// Ended lists the recorded ends not yet passed to Forget, by job id: what
// an agent must report before it registers, so the controller does not
// mistake a job that finished during an agent restart for a lost one.
func (r *Runtime) Ended() ([]JobEnd, error) {
	entries, err := os.ReadDir(r.cfg.SpoolDir)
	if err != nil {
		return nil, fmt.Errorf("launch: read spool %s: %w", r.cfg.SpoolDir, err)
	}
	var out []JobEnd
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "job_") {
			continue
		}
		rec, err := readRecord(filepath.Join(r.cfg.SpoolDir, e.Name(), stateFile))
		if err == nil && rec.End != nil {
			out = append(out, *rec.End)
		}
	}
	slices.SortFunc(out, func(a, b JobEnd) int { return compareUint(a.JobID, b.JobID) })
	return out, nil
}
