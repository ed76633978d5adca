package state

import "github.com/parityhpc/parity/scheduler/core"

// Effect is what a command leaves to do once it is durable. The machine
// only describes effects; the controller carries them out, in order,
// after the commit.
type Effect interface{ effect() }

// Decision-log record kinds.
const (
	KindStart    = "start"
	KindEnd      = "end"
	KindCancel   = "cancel"
	KindRequeue  = "requeue"
	KindHold     = "hold"
	KindRelease  = "release"
	KindNodeFail = "node_fail"
	KindSuspend  = "suspend"
	KindResume   = "resume"
	KindPreempt  = "preempt"
	KindUpdate   = "update"
)

// Logged is a decision-log record about a job. State is the job's state as
// the record shows it (before the change for a cancel or a requeue, after
// it for a start or an end).
type Logged struct {
	Kind                   string
	Job                    core.JobID
	User, Partition, State string
	Actor, Reason          string
	Nodes                  []string
	// Fields are the record's further facts (an update's changed fields).
	Fields map[string]string
}

// Accepted says a submission took its id and waits in the queue.
type Accepted struct{ Job core.JobID }

// Launch orders the run of a started job onto its nodes.
type Launch struct {
	Job core.JobID
	Run int32
}

// Kill orders a run's processes killed on the nodes named.
type Kill struct {
	Job    core.JobID
	Run    int32
	Nodes  []string
	Reason string
	// DropLaunch: a launch still queued for the run is dropped, not sent
	// first (the run is over; the kill only clears what is left).
	DropLaunch bool
}

// Signal orders a signal delivered to a run's processes.
type Signal struct {
	Job    core.JobID
	Run    int32
	Nodes  []string
	Signal int32
	Reason string
}

// Pause orders a run's processes stopped where they are (suspend) or, with
// Resume, continued; it replaces an opposite order not yet delivered.
type Pause struct {
	Job    core.JobID
	Run    int32
	Nodes  []string
	Reason string
	Resume bool
}

// Account is a run's final accounting line: State is the run's end as
// the ledger names it (the job's final state, or Requeued).
type Account struct {
	Job      core.JobID
	Run      int32
	State    string
	Requeued bool
}

// Finished says a job reached a terminal state (for counters and for
// clients waiting on its end).
type Finished struct {
	Job   core.JobID
	State string
}

// Requeued says a job's run ended and the job waits in the queue again
// for its next run (Run is the run that ended).
type Requeued struct {
	Job core.JobID
	Run int32
}

func (Logged) effect()   {}
func (Accepted) effect() {}
func (Launch) effect()   {}
func (Kill) effect()     {}
func (Signal) effect()   {}
func (Pause) effect()    {}
func (Account) effect()  {}
func (Finished) effect() {}
func (Requeued) effect() {}
