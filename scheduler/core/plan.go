package core

import (
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
)

// Plan is the outcome of one scheduling pass.
type Plan struct {
	Now time.Time
	// Starts are the jobs to start now, in the order they were decided.
	Starts []Start
	// Reservations are the resources held for blocked jobs at their expected start.
	Reservations []PlannedReservation
	// Preemptions are running jobs to preempt for higher-class pending
	// jobs; those jobs are not started in the same pass but hold a
	// reservation from when the preempted jobs' resources come back.
	Preemptions []Preemption
	// Decisions has one record per pending job (started ones included), in
	// priority order: Decisions[i].Rank == i.
	Decisions []Decision
	// Shares are the fair-share rows the priorities used (sshare).
	Shares []policy.ShareRow
	// Warnings name snapshot entries the pass had to ignore (a node with a
	// bad shape, a running job on an unknown node, …).
	Warnings []string
	Stats    Stats
}

// Start is a job the plan starts now.
type Start struct {
	Job JobID
	// Partition is the partition the job starts in: one of its listed
	// partitions when it names several.
	Partition string
	Nodes     []NodeAlloc
	// End is start + time limit; zero when the job has no limit.
	End time.Time
	// Backfilled is set when a higher-priority job was blocked in the same
	// partition (Slurm's "Scheduler=Backfill").
	Backfilled bool
}

// PlannedReservation holds resources for a blocked job from Start to End.
type PlannedReservation struct {
	Job        JobID
	Start, End time.Time // End is zero for a job without a time limit
	// Nodes name the nodes and devices held; a reservation holds a number
	// of CPUs on each (CPUs in all), not particular ones.
	Nodes []NodeAlloc
	CPUs  int
}

// Decision records what the pass decided for one job and the inputs that
// made it, so the controller can keep a decision log and squeue/sprio can
// show it.
type Decision struct {
	Job       JobID
	Partition string
	Rank      int
	Action    Action
	Reason    Reason
	// Detail is a short human fact behind the reason ("needs 8 h100 on one
	// node"); empty for the common Priority case, which Explain expands.
	Detail string
	// Priority is the job's multifactor priority; Factors breaks it down.
	Priority float64
	factors  *factorBase
	age, fs  float64
	nice     int
	// ExpectedStart is the earliest start the pass found (now for started
	// jobs); valid only when StartKnown.
	ExpectedStart time.Time
	StartKnown    bool
	// Shadow is the start of the reservation a backfilled job had to
	// respect, or of the job's own reservation; zero when none.
	Shadow time.Time
	// Nodes are the nodes a started or reserved job got ("SchedNodes").
	Nodes []string
}

// factorBase is a priority breakdown shared by jobs that differ only in
// age, fair-share and nice, with the weights to apply those.
type factorBase struct {
	b         policy.Breakdown
	wAge, wFS float64
}

// Factors returns the job's priority breakdown as sprio shows it: every
// factor, every weighted term and the total (the TRES map is shared
// between jobs; do not modify it).
func (d *Decision) Factors() policy.Breakdown {
	if d.factors == nil {
		return policy.Breakdown{Total: d.Priority}
	}
	b := d.factors.b
	b.Age, b.Weighted.Age = d.age, d.factors.wAge*d.age
	b.FairShare, b.Weighted.FairShare = d.fs, d.factors.wFS*d.fs
	b.Nice, b.Total = d.nice, d.Priority
	return b
}

// Stats counts what the pass did.
type Stats struct {
	Pending, Running, Nodes   int
	Started, Backfilled       int
	Reserved, Preempted       int
	Shapes, NodeClasses       int
	PlacementTries, MemoHits  int
	ExpectedStartComputations int
}

// Decision returns the decision for a job.
func (p *Plan) Decision(id JobID) (Decision, bool) {
	for _, d := range p.Decisions {
		if d.Job == id {
			return d, true
		}
	}
	return Decision{}, false
}
