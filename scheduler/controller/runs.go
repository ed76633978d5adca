package controller

import (
	"fmt"
	"slices"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// A job runs once per start: run 0 first, one more each time it is
// requeued (j.Restarts, stored with the job). Launch, kill, signal and
// suspend orders name the run they are for, and agents echo the run in
// their running and end reports, so an agent that was away while its run
// was requeued (node down past the timeout) cannot end, fail or kill the
// job's later run: what it says of an earlier run concerns that run only.

// killRun orders the end of one run of a job.
func killRun(id uint64, run int32, reason string) *pb.Order {
	return &pb.Order{Kind: "kill", JobId: id, Run: run, Reason: reason}
}

// unexpectedRunLocked says why a run an agent reports on n is not one the
// controller expects there, or "" when it is (c.mu held).
func (c *Controller) unexpectedRunLocked(n *node, r *pb.RunningJob) string {
	j := c.st.jobs[core.JobID(r.GetJobId())]
	switch {
	case j == nil || j.State == StatePending || finished(j.State) || !slices.Contains(allocNodes(j), n.name):
		return "not running here according to the controller"
	case r.GetRun() != j.Restarts:
		return fmt.Sprintf("run %d of the job was requeued; the job is at run %d", r.GetRun(), j.Restarts)
	}
	return ""
}

// earlierRun is the accounting line of a job's last requeued run, kept
// (in memory only) so that a late end report of that run adds what it
// measured to that run's line.
type earlierRun struct {
	line  ledger.JobRecord
	usage []*pb.NodeUsage
}

// earlierRunEndLocked takes the end report of a run other than j's
// current one (c.mu held): the job's state is not touched, and the usage
// the agent measured goes to that run's ledger line (written again: the
// ledger upserts by job and run).
func (c *Controller) earlierRunEndLocked(j *job, node string, req *pb.JobEndedRequest) ([]write, func(), error) {
	c.log.Warn("end of an earlier run of a job; recorded against that run only", "job", j.Core.ID, "run", req.GetRun(),
		"currentRun", j.Restarts, "node", node, "state", req.GetState(), "exit", fmt.Sprintf("%d:%d", req.GetExitCode(), req.GetSignal()))
	p := j.prevRun
	if p == nil || p.line.Run != int(req.GetRun()) || !setNodeUsage(&p.usage, node, req.GetUsage()) {
		return nil, nil, nil
	}
	p.line.Usage = ledgerUsage(p.usage)
	line := p.line
	return nil, func() { c.sendLedger(line) }, nil
}
