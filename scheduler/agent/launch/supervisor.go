package launch

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/parityhpc/parity/scheduler/agent/shim"
)

// supervisor returns the connection to the node's supervisor, connecting
// (and starting one when none runs) if there is none yet.
func (r *Runtime) supervisor() (*shim.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if r.sup != nil {
		return r.sup, nil
	}
	sock := filepath.Join(r.cfg.SpoolDir, supervisorSocket)
	c, err := shim.Connect(sock, r.cfg.Shim, filepath.Join(r.cfg.SpoolDir, supervisorLog), r.supervisorEnded)
	if err != nil {
		return nil, fmt.Errorf("launch: node supervisor: %w", err)
	}
	r.sup = c
	r.busy.Add(1)
	go r.watchSupervisor(c)
	r.log.Info("connected to the node's job supervisor", "pid", c.Pid(), "socket", sock)
	return c, nil
}

// supervisorEnded is told of each job whose status file is final.
func (r *Runtime) supervisorEnded(id string) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		r.log.Warn("supervisor reported the end of an unknown job", "job", id)
		return
	}
	r.mu.Lock()
	j := r.jobs[n]
	r.mu.Unlock()
	if j != nil {
		r.finish(j)
	}
}

// watchSupervisor finishes the jobs of a supervisor that went away: their
// status files say how they ended if it recorded that, else they are lost
// (NODE_FAIL) and their groups are swept. The next launch starts a new
// supervisor.
func (r *Runtime) watchSupervisor(c *shim.Client) {
	defer r.busy.Done()
	select {
	case <-c.Lost():
	case <-r.done:
		return
	}
	r.mu.Lock()
	if r.sup == c {
		r.sup = nil
	}
	closed := r.closed
	r.mu.Unlock()
	if closed || c.Err() == nil {
		return
	}
	r.log.Error("the node's job supervisor went away; its jobs are ended", "pid", c.Pid(), "err", c.Err())
	for _, j := range r.snapshot() {
		j.mu.Lock()
		mine := j.sup == c
		j.mu.Unlock()
		if mine {
			r.finish(j)
		}
	}
}

// runningUnder asks the supervisor which jobs it runs, by job id.
func runningUnder(ctx context.Context, c *shim.Client) (map[uint64]int, error) {
	list, err := c.Running(ctx)
	if err != nil {
		return nil, fmt.Errorf("launch: ask the supervisor for its jobs: %w", err)
	}
	out := make(map[uint64]int, len(list))
	for _, rj := range list {
		if n, err := strconv.ParseUint(rj.JobID, 10, 64); err == nil {
			out[n] = rj.Pid
		}
	}
	return out, nil
}
