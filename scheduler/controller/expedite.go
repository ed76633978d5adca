package controller

import (
	"fmt"
	"sort"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// Expedited requeue (sbatch --requeue=expedite, Slurm 25.11): a job that
// asked for it and whose run a failed device (or node) stopped is
// requeued at once, ranked ahead of every other pending job, and never
// given what failed under it again. The state machine carries it (Stop
// with Expedite); the controller decides when it applies and says so in
// the decision log, sprio and explain.

// expeditedOverride is PriorityFactors.override for an expedited job.
const expeditedOverride = "expedited requeue"

// expediteStop makes a health stop an expedited requeue when the job asked
// for one and is being requeued: the devices that failed on node (all of
// the node when uuids is empty) are avoided from now on.
func expediteStop(stop *cstate.Stop, j *job, node string, uuids map[string]bool) {
	if !stop.Requeue || !j.spec.GetRequeueExpedite() {
		return
	}
	avoid := core.NodeDevices{Node: node}
	if len(uuids) > 0 {
		for u := range uuids {
			avoid.Devices = append(avoid.Devices, u)
		}
		sort.Strings(avoid.Devices)
	}
	stop.Expedite, stop.Avoid = true, []core.NodeDevices{avoid}
}

// expediteEnd makes the end of a run whose node failed (stopped
// responding, or came back without the job) an expedited requeue when the
// job asked for one and is being requeued: the node is avoided from now
// on, as Slurm moves an expedited job off the node that failed it.
func expediteEnd(end *cstate.End, j *job, node string) {
	if end.Requeue && j.spec.GetRequeueExpedite() {
		end.Expedite, end.Avoid = true, []core.NodeDevices{{Node: node}}
	}
}

// expediteDetail is the decision-log detail of an expedited requeue.
func expediteDetail(a []core.NodeDevices) string {
	return fmt.Sprintf("expedited requeue (--requeue=expedite): eligible at once, ranked ahead of every other pending job until it starts, never again on %s",
		cstate.FormatAvoid(a))
}

// factorsFor is the job's sprio breakdown; an expedited job's says why
// its total is not the weighted sum.
func factorsFor(j *job) *pb.PriorityFactors {
	f := factorsProto(j.factors)
	if f != nil && j.Core.Expedite {
		f.Override = expeditedOverride
	}
	return f
}

func avoidToProto(list []core.NodeDevices) []*pb.NodeAlloc {
	out := make([]*pb.NodeAlloc, len(list))
	for i, a := range list {
		out[i] = &pb.NodeAlloc{Node: a.Node, Devices: a.Devices}
	}
	return out
}

func avoidFromProto(ps []*pb.NodeAlloc) []core.NodeDevices {
	var out []core.NodeDevices
	for _, p := range ps {
		out = append(out, core.NodeDevices{Node: p.GetNode(), Devices: p.GetDevices()})
	}
	return out
}

// expediteFields fills a record's expedite state: Job.expedited is the
// pending job's rank, or, while the stopped run ends, that its requeue
// will be expedited (the job is COMPLETING then).
func (j *job) expediteFields(p *pb.Job) {
	p.Expedited = j.Core.Expedite || j.ExpediteOnEnd
	if len(j.Core.Avoid) > 0 {
		p.Avoid = avoidToProto(j.Core.Avoid)
	}
}

// expediteFromRecord reads them back.
func (j *job) expediteFromRecord(p *pb.Job) {
	j.Core.Avoid = avoidFromProto(p.GetAvoid())
	if !p.GetExpedited() {
		return
	}
	if p.GetState() == StatePending {
		j.Core.Expedite = true
	} else {
		j.ExpediteOnEnd = true
	}
}
