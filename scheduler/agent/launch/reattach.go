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

// Reattach scans the spool after a restart: jobs whose shim still runs are
// supervised again (their limits re-armed from the recorded deadline),
// jobs that ended while no agent watched are finished from the status
// their shim left, and ends not yet forgotten are delivered again. It
// returns the ids of the jobs it re-attached to, in order.
func (r *Runtime) Reattach(ctx context.Context) ([]uint64, error) {
	entries, err := os.ReadDir(r.cfg.SpoolDir)
	if err != nil {
		return nil, fmt.Errorf("launch: read spool %s: %w", r.cfg.SpoolDir, err)
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
		if errors.Is(err, os.ErrNotExist) {
			continue // a launch that died before its first record; nothing ran
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ok, err := r.reattach(dir, rec)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			attached = append(attached, rec.Spec.JobID)
		}
	}
	slices.Sort(attached)
	return attached, errors.Join(errs...)
}

// reattach takes one recorded job back; it reports whether the job is
// still running and now supervised.
func (r *Runtime) reattach(dir string, rec Record) (bool, error) {
	id := rec.Spec.JobID
	if rec.End != nil {
		r.box.put(*rec.End)
		return false, nil
	}
	j := &job{dir: dir, rec: rec, gpus: newGPUAggs(rec.Spec.GPUs, rec.GPUUsage)}
	var loadErr error
	if rec.Isolated && r.cfg.Cgroups != nil {
		if j.group, loadErr = r.cfg.Cgroups.Load(rec.JobGroup); loadErr == nil {
			j.step, loadErr = r.cfg.Cgroups.Load(rec.StepGroup)
		}
	}
	pid, start := rec.ShimPid, rec.ShimStart
	if pid == 0 {
		if st, err := shim.ReadStatus(j.statusPath()); err == nil {
			pid = st.ShimPid
			start, _ = procStart(pid)
		}
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return false, ErrClosed
	}
	if _, dup := r.jobs[id]; dup {
		r.mu.Unlock()
		return false, nil
	}
	r.jobs[id] = j
	r.busy.Add(1)
	r.mu.Unlock()
	pidfd, err := openProcess(pid, start)
	if err != nil {
		r.busy.Done()
		// The shim is gone: the job ended while no agent watched (its
		// status says how), or the node restarted under it.
		if loadErr != nil {
			r.log.Warn("job group gone", "job", id, "err", loadErr)
		}
		r.finish(j)
		if errors.Is(err, errGone) {
			return false, nil
		}
		return false, err
	}
	if loadErr != nil {
		r.log.Error("re-attached job runs but its cgroup could not be loaded; limits still hold, counters are lost", "job", id, "err", loadErr)
	}
	j.mu.Lock()
	r.armTimers(j)
	j.mu.Unlock()
	go r.watchPidfd(j, pidfd)
	r.log.Info("re-attached to running job", "job", id, "shimPid", pid, "deadline", rec.Deadline, "ending", rec.Ending)
	return true, nil
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
