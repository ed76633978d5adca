package workflow

// State is a job or array task state by Slurm's long name (squeue -l,
// sacct).
type State string

// States the workflow rules read and write.
const (
	Pending     State = "PENDING"
	Running     State = "RUNNING"
	Suspended   State = "SUSPENDED"
	Completed   State = "COMPLETED"
	Failed      State = "FAILED"
	Cancelled   State = "CANCELLED"
	Timeout     State = "TIMEOUT"
	NodeFail    State = "NODE_FAIL"
	Preempted   State = "PREEMPTED"
	OutOfMemory State = "OUT_OF_MEMORY"
	BootFail    State = "BOOT_FAIL"
	Deadline    State = "DEADLINE"
	Requeued    State = "REQUEUED"
	RequeueHold State = "REQUEUE_HOLD"
)

// Finished reports whether the state is terminal: the job will not run
// again (a requeued job is pending again instead).
func (s State) Finished() bool {
	switch s {
	case Completed, Failed, Cancelled, Timeout, NodeFail, Preempted, OutOfMemory, BootFail, Deadline:
		return true
	}
	return false
}

// Active reports whether the job holds (or may soon hold) resources:
// pending, running or suspended.
func (s State) Active() bool {
	return s == Pending || s == Running || s == Suspended || s == RequeueHold
}

// Succeeded reports whether the job ended with exit code 0 (COMPLETED).
func (s State) Succeeded() bool { return s == Completed }

// Valid reports whether s is one of the states above.
func (s State) Valid() bool {
	return s.Finished() || s.Active() || s == Requeued
}
