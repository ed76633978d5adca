package controller

import (
	"fmt"
	"slices"
	"strings"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
)

// A job may name several partitions (sbatch -p a,b). While it pends,
// core.Job.Partitions and JobSpec.partitions list them best first and
// Partition is the first; once it starts, Partition is the one the pass
// chose, which the record, the ledger and the agent's environment carry.

// partitionText is how squeue shows the job's partition: the list while
// it may still run in several, else the one.
func (j *job) partitionText() string {
	if j.State == StatePending && len(j.Core.Partitions) > 1 {
		return strings.Join(j.Core.Partitions, ",")
	}
	return j.Core.Partition
}

// inPartition reports whether a partition filter selects the job: the
// partition it runs in, or while pending any it may run in.
func (j *job) inPartition(names []string) bool {
	if slices.Contains(names, j.Core.Partition) {
		return true
	}
	if j.State != StatePending {
		return false
	}
	for _, p := range j.Core.Partitions {
		if slices.Contains(names, p) {
			return true
		}
	}
	return false
}

// setPartitions replaces the partitions a pending job may run in (a
// non-empty list, best first).
func (j *job) setPartitions(names []string) {
	j.Core.Partition, j.spec.Partition = names[0], names[0]
	j.Core.Partitions, j.spec.Partitions = nil, nil
	if len(names) > 1 {
		j.Core.Partitions, j.spec.Partitions = names, names
	}
}

// specPartitions is a resolved spec's partitions, best first.
func specPartitions(s *pb.JobSpec) []string {
	if len(s.GetPartitions()) > 1 {
		return s.GetPartitions()
	}
	return []string{s.GetPartition()}
}

// defaultLimit is the time limit a job without one gets: the partition's
// DefaultTime, else its MaxTime (0 = unlimited). A job listing several
// partitions gets it at submit only when they all agree; otherwise 0,
// and the core applies each partition's default until the job starts
// (see startLimit).
func (c *Controller) defaultLimit(parts []string, part string) time.Duration {
	if len(parts) < 2 {
		parts = []string{part}
	}
	var out time.Duration
	for i, name := range parts {
		p, ok := c.pcfg().Partition(name)
		if !ok {
			return 0
		}
		d := p.DefaultTime
		if d == 0 {
			d = p.MaxTime
		}
		if i > 0 && d != out {
			return 0
		}
		out = d
	}
	return out
}

// partitionFact is one listed partition's verdict for explain's facts.
func partitionFact(v core.PartitionVerdict) string {
	reason := string(v.Reason)
	if reason == "" {
		reason = "not tried"
	}
	fact := fmt.Sprintf("partition %s: %s", v.Partition, reason)
	if v.Detail != "" {
		fact += " (" + v.Detail + ")"
	}
	if v.StartKnown {
		fact += "; expected start " + v.ExpectedStart.UTC().Format(time.RFC3339)
	}
	return fact
}
