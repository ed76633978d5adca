package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// Down cancels every job, stops the agents and then the controller
// (SIGTERM, SIGKILL after a grace period), removes this instance's cgroups
// (killing what survived in them) and the pid files.
func (p *Procs) Down(ctx context.Context) error {
	var errs []error
	if p.Addr != "" {
		if err := p.cancelJobs(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	p.mu.Lock()
	// Agents before the controllers, so none reports to a vanished one.
	children := slices.Concat(p.ctls, p.children)
	p.mu.Unlock()
	for i := len(children) - 1; i >= 0; i-- {
		c := children[i]
		if c == nil {
			continue // a controller killed and not restarted
		}
		errs = append(errs, stopChild(ctx, c))
		c.log.Close()
		os.Remove(filepath.Join(p.Dir, RunDir, c.name+".pid"))
	}
	closeAll(p.lis)
	// The machines the lab built for parity-agent nodes: their adapters
	// stop after the agents that attached them.
	p.mu.Lock()
	machines := p.machines
	p.machines = nil
	p.mu.Unlock()
	for _, m := range machines {
		errs = append(errs, m.Close())
	}
	errs = append(errs, RemoveCgroups(p.CgroupRoot))
	errs = append(errs, RemoveRuntimeDir(p.Dir))
	return errors.Join(errs...)
}

// cancelJobs cancels every unfinished job and waits until the controller
// sees them ended, so the agents stop no job mid-run.
func (p *Procs) cancelJobs(ctx context.Context) error {
	cl, err := p.Client(ctx, "admin")
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	jobs, err := cl.ListJobs(ctx, &pb.ListJobsRequest{})
	if err != nil {
		return fmt.Errorf("cluster: list jobs to cancel: %w", err)
	}
	for _, j := range jobs {
		if _, err := cl.CancelJob(ctx, j.GetId()); err != nil {
			p.log.Warn("cancel at lab down", "job", j.GetId(), "err", err)
		}
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for len(jobs) > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: %d jobs still unfinished at lab down: %w", len(jobs), ctx.Err())
		case <-tick.C:
		}
		if jobs, err = cl.ListJobs(ctx, &pb.ListJobsRequest{}); err != nil {
			return fmt.Errorf("cluster: list jobs to cancel: %w", err)
		}
	}
	return nil
}

// stopChild sends SIGTERM, then SIGKILL if the daemon is still there
// after 15 seconds, and waits until it is reaped.
func stopChild(ctx context.Context, c *child) error {
	select {
	case <-c.done:
		return nil
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(15 * time.Second)
	defer t.Stop()
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
	case <-t.C:
	}
	_ = c.cmd.Process.Kill()
	<-c.done
	return fmt.Errorf("cluster: %s (pid %d) ignored SIGTERM and was killed", c.name, c.cmd.Process.Pid)
}
