package controller

import (
	"slices"
	"time"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
)

// willRun answers sbatch --test-only: where and when the prepared job
// would start if it were queued now. It runs a scheduling pass over the
// current state with the job added under the id it would get, and reads
// that job's decision; nothing is queued and no state changes.
func (c *Controller) willRun(p *prepared) *pb.SubmitResponse {
	now := c.now()
	c.mu.Lock()
	snap := c.snapshotLocked(now)
	id := c.st.m.NextID()
	c.mu.Unlock()
	cj := p.job.Core
	// --hold asks to keep the job back once queued; the question here is
	// when it could start.
	cj.ID, cj.Hold = id, core.HoldNone
	snap.Jobs = append(snap.Jobs, cj)
	plan := core.Schedule(snap, c.schedConfig(), now)
	resp := &pb.SubmitResponse{JobId: uint64(id), Partition: p.job.partitionText(), Warnings: p.notes}
	d, ok := plan.Decision(id)
	startAt := now // when a start decision starts: now, or the --begin time
	if ok && d.Action == core.ActionPending && d.Reason == core.ReasonBeginTime && d.StartKnown {
		// Waiting only for --begin: Slurm names the nodes and CPUs the
		// job would get then (the anchor: --begin=2030-01-01 --nodes=4
		// "using 4 processors on nodes n[1-4]"), so the pass is run as
		// of that time over the same state.
		c.mu.Lock()
		later := c.snapshotLocked(now)
		c.mu.Unlock()
		later.Jobs = append(later.Jobs, cj)
		atBegin := core.Schedule(later, c.coreCfg, d.ExpectedStart)
		if bd, found := atBegin.Decision(id); found && bd.Action == core.ActionStart {
			plan, d, startAt = atBegin, bd, d.ExpectedStart
		}
	}
	if placesNothing(p.job.spec) {
		resp.ExpectedStart, resp.NoNodes = api.Timestamp(now), true
		resp.Message = api.SubmitResponseToJSON(resp).WillRunText(time.UTC, time.RFC3339)
		return resp
	}
	if !ok {
		resp.PendingReason = "not considered by the scheduling pass"
		resp.Message = api.SubmitResponseToJSON(resp).WillRunText(time.UTC, time.RFC3339)
		return resp
	}
	if d.Partition != "" {
		resp.Partition = d.Partition
	}
	var allocs []core.NodeAlloc
	held := 0 // CPUs a reservation holds (it names no particular ones)
	start := d.ExpectedStart
	switch d.Action {
	case core.ActionStart:
		for _, s := range plan.Starts {
			if s.Job == id {
				allocs, resp.Partition = s.Nodes, s.Partition
			}
		}
		start = startAt
	case core.ActionReserve:
		for _, r := range plan.Reservations {
			if r.Job == id {
				allocs, start, held = r.Nodes, r.Start, r.CPUs
			}
		}
	}
	resp.Cpus = int32(held)
	for _, a := range allocs {
		resp.Nodes = append(resp.Nodes, a.Node)
		resp.Cpus += int32(a.CPUs.Count())
	}
	if d.Action != core.ActionPending || d.StartKnown {
		resp.ExpectedStart = api.Timestamp(start)
	} else {
		resp.PendingReason = string(d.Reason)
		if d.Detail != "" {
			resp.PendingReason += ": " + d.Detail
		}
	}
	// In UTC: clients reword it from the fields in their own time zone.
	resp.Message = api.SubmitResponseToJSON(resp).WillRunText(time.UTC, time.RFC3339)
	return resp
}

// placesNothing is a job left no node count (-N 0, an empty -w) that asks
// for no tasks, no CPUs beyond the default and no GPUs of its own: Slurm's
// --test-only answers it "0 processors on nodes " now (the anchor, for
// -N0, -N0 --ntasks-per-node=1, -N0 --gpus-per-node=1 and an empty -w), while
// -N0 with -n 2, -c 4 or -G 1 is placed on a node.
func placesNothing(s *pb.JobSpec) bool {
	if s.GetNodes() != 0 || !slices.ContainsFunc(s.GetEmptyOptions(), func(f string) bool { return f == "nodes" || f == "nodeList" }) {
		return false
	}
	// The tasks and per-node tasks the controller derived itself (a
	// default of one) are not asked for.
	tasks := s.GetNtasks()
	if slices.Contains(s.GetDerivedOptions(), "ntasks") {
		tasks = 0
	}
	asksCPUs := s.GetCpusPerTask() > 1 && s.GetNtasksPerNode() == 0
	return tasks == 0 && !asksCPUs && len(s.GetGres().GetPerJob()) == 0
}
