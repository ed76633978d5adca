package sbatch

import (
	"fmt"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/jobspec"
)

// WillRun is a test-only answer: where and when the job would start.
type WillRun struct {
	JobID     uint64
	Start     *time.Time // nil when no start is known
	CPUs      int32
	Nodes     []string
	Partition string
	// PendingReason says why no start is known.
	PendingReason string
}

// Text words the answer as sbatch --test-only does, in loc: "Job 7 to
// start at 2026-11-29T21:12:51 using 2 processors on nodes gpu[1-2] in
// partition gpu". Slurm prints it on standard error after "sbatch: ".
func (w WillRun) Text(loc *time.Location) string {
	if w.Start == nil {
		return fmt.Sprintf("Job %d would wait in partition %s; no start time is known (%s)", w.JobID, w.Partition, w.PendingReason)
	}
	if loc == nil {
		loc = time.Local
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Job %d to start at %s", w.JobID, w.Start.In(loc).Format(stampLayout))
	if len(w.Nodes) > 0 {
		fmt.Fprintf(&b, " using %d processors on nodes %s", w.CPUs, jobspec.CompressHostlist(w.Nodes))
	}
	fmt.Fprintf(&b, " in partition %s", w.Partition)
	return b.String()
}
