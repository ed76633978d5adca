package core

import (
	"fmt"
	"time"
)

// PreemptType says who may preempt whom (Slurm's PreemptType).
type PreemptType string

// Preemption types.
const (
	// PreemptNone never preempts (preempt/none).
	PreemptNone PreemptType = ""
	// PreemptQOS lets a job preempt jobs whose QOS its QOS lists in
	// Preempt (preempt/qos); QOS priority plays no part.
	PreemptQOS PreemptType = "qos"
	// PreemptPartitionPrio lets a job preempt jobs of partitions with a
	// lower PriorityTier (preempt/partition_prio); equal tiers never.
	PreemptPartitionPrio PreemptType = "partition_prio"
)

// PreemptMode is what happens to a preempted job.
type PreemptMode string

// Preemption modes. Slurm's SUSPEND is not offered: a suspended job keeps
// its memory and GRES, so it cannot free the GPUs a preemptor needs.
const (
	PreemptOff     PreemptMode = "off"
	PreemptCancel  PreemptMode = "cancel"
	PreemptRequeue PreemptMode = "requeue" // cancel when the job is --no-requeue
)

// PreemptConfig is the cluster's preemption setup; QOS and partitions may
// override the mode, grace and exempt times for their own jobs.
type PreemptConfig struct {
	Type PreemptType
	// Mode is the default PreemptMode ("" = off).
	Mode PreemptMode
	// GraceTime is how long a preempted job has to end after SIGTERM.
	GraceTime time.Duration
	// ExemptTime is how long a job runs before it may be preempted, so
	// freshly started jobs are not thrashed (PreemptExemptTime).
	ExemptTime time.Duration
}

func (c PreemptConfig) validate() error {
	switch c.Type {
	case PreemptNone, PreemptQOS, PreemptPartitionPrio:
	default:
		return fmt.Errorf("core: config Preempt.Type=%q must be %q, %q or empty", c.Type, PreemptQOS, PreemptPartitionPrio)
	}
	if !validMode(c.Mode) {
		return fmt.Errorf("core: config Preempt.Mode=%q must be %q, %q or %q (suspend cannot free GPUs: suspended jobs keep their GRES)", c.Mode, PreemptOff, PreemptCancel, PreemptRequeue)
	}
	switch {
	case c.GraceTime < 0:
		return fmt.Errorf("core: config Preempt.GraceTime=%v must not be negative", c.GraceTime)
	case c.ExemptTime < 0:
		return fmt.Errorf("core: config Preempt.ExemptTime=%v must not be negative", c.ExemptTime)
	}
	return nil
}

func validMode(m PreemptMode) bool {
	return m == "" || m == PreemptOff || m == PreemptCancel || m == PreemptRequeue
}

// Preemption is a running job the plan preempts to make room for a
// higher-class pending job. The controller signals it (SIGTERM at once,
// SIGKILL at GraceEnd), then cancels or requeues it as Mode says; the
// preemptor starts in a later pass, once the resources are free.
type Preemption struct {
	Job JobID // the job preempted
	By  JobID // the pending job it makes room for
	// Mode is PreemptCancel or PreemptRequeue (requeue falls back to
	// cancel for --no-requeue jobs).
	Mode     PreemptMode
	GraceEnd time.Time
	Reason   string
}
