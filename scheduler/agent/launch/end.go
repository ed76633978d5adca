package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/agent/shim"
)

// sweepTimeout bounds the final kill of a job's leftovers.
const sweepTimeout = 30 * time.Second

// finish turns the supervisor's word that a job ended into the job's end:
// leftovers are killed, counters read, groups removed, the end persisted
// and then delivered.
func (r *Runtime) finish(j *job) {
	if !r.enter() {
		return
	}
	defer r.busy.Done()
	j.mu.Lock()
	if j.ended {
		j.mu.Unlock()
		return
	}
	j.ended = true
	j.stopTimers()
	st, stErr := shim.ReadStatus(j.statusPath())
	stats := r.collect(j)
	end := classify(j.rec, st, stErr, stats.OOMKills, r.cfg.Clock.Now())
	end.Usage = Usage{CPUTime: stats.CPUTime, MemoryPeakBytes: stats.MemoryPeakBytes, OOMKills: stats.OOMKills,
		GPUs: j.gpuUsage(), Missing: stats.Missing}
	j.rec.End = &end
	if err := j.persist(end.End); err != nil {
		r.log.Error("could not record the job's end; it is delivered but will not survive a restart", "job", end.JobID, "err", err)
	}
	j.mu.Unlock()
	r.mu.Lock()
	delete(r.jobs, end.JobID)
	r.ended[end.JobID] = true
	r.mu.Unlock()
	r.log.Info("job ended", "job", end.JobID, "state", end.State, "exit", end.ExitString(), "reason", end.Reason,
		"cpuTime", end.Usage.CPUTime, "memPeak", end.Usage.MemoryPeakBytes)
	r.box.put(end)
}

// collect kills whatever is left in the job's groups, reads the final
// counters and removes the groups; j.mu is held.
func (r *Runtime) collect(j *job) cgroup.Stats {
	if j.group == nil {
		if pid := j.pid; pid > 0 {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
		return cgroup.Stats{Missing: []string{"cgroup"}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), sweepTimeout)
	defer cancel()
	if err := j.group.Kill(ctx); err != nil {
		r.log.Error("job leftovers survived the final kill", "job", j.rec.Spec.JobID, "group", j.group.Path(), "err", err)
	}
	stats, err := j.group.FinalStats()
	if err != nil {
		r.log.Warn("could not read the job's counters", "job", j.rec.Spec.JobID, "err", err)
		stats.Missing = append(stats.Missing, "cgroup")
	}
	// The kernel counts an OOM kill in the group of the task it killed
	// (the step's), not only in the one whose limit was hit.
	if j.step != nil {
		if s, err := j.step.FinalStats(); err == nil {
			stats.OOMKills = max(stats.OOMKills, s.OOMKills)
		}
	}
	for _, g := range []cgroup.Group{j.step, j.group} {
		if g == nil {
			continue
		}
		if err := g.Delete(); err != nil {
			r.log.Warn("could not remove a job group", "group", g.Path(), "err", err)
		}
	}
	return stats
}

// classify decides a job's end state from what the runtime asked for
// (rec.Ending), what the supervisor recorded and whether the OOM killer struck.
// Precedence follows Slurm: a state the runtime imposed (cancel, time
// limit) wins, then an OOM kill, then the exit status.
func classify(rec Record, st shim.Status, stErr error, oomKills uint64, now time.Time) JobEnd {
	end := JobEnd{JobID: rec.Spec.JobID, Run: rec.Spec.Run, Start: rec.Started, End: now, CPUs: rec.CPUs, Isolated: rec.Isolated}
	if stErr == nil && !st.Ended.IsZero() {
		end.End = st.Ended
	}
	if !st.Started.IsZero() {
		end.Start = st.Started
	}
	lost := stErr != nil || !st.Done
	if !lost {
		end.ExitCode, end.Signal, end.CoreDumped = st.ExitCode, st.Signal, st.CoreDumped
	}
	switch {
	case rec.Ending != "":
		end.State, end.Reason = rec.Ending, endingReason(rec)
	case lost:
		end.State = accounting.StateNodeFail
		end.Reason = "the job's supervisor ended without recording a status"
		if stErr != nil && !errors.Is(stErr, os.ErrNotExist) {
			end.Reason += ": " + stErr.Error()
		}
	case st.StartError != "":
		end.State, end.ExitCode, end.Reason = accounting.StateFailed, 1, "launch failed: "+st.StartError
	case oomKills > 0:
		end.State, end.Reason = accounting.StateOutOfMemory, fmt.Sprintf("oom-kill: %d process(es) killed at the memory limit", oomKills)
	case st.Signal != 0:
		end.State, end.Reason = accounting.StateFailed, fmt.Sprintf("killed by signal %d", st.Signal)
	case st.ExitCode != 0:
		end.State, end.Reason = accounting.StateFailed, fmt.Sprintf("exit code %d", st.ExitCode)
	default:
		end.State = accounting.StateCompleted
	}
	return end
}

func endingReason(rec Record) string {
	switch rec.Ending {
	case accounting.StateTimeout:
		return fmt.Sprintf("time limit %s reached", rec.Spec.TimeLimit)
	case accounting.StateCancelled:
		return "cancelled"
	}
	return "ended by the node agent as " + string(rec.Ending)
}
