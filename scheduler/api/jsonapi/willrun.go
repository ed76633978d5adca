package jsonapi

import (
	"fmt"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/jobspec"
)

// WillRunText words a test-only answer as sbatch --test-only does: "Job 7
// to start at 2026-11-29T21:12:51 using 2 processors on nodes gpu[1-2] in
// partition gpu", the time in loc with layout; or, with no start known,
// why. The controller and both sbatch clients word it with this.
func (r SubmitResponse) WillRunText(loc *time.Location, layout string) string {
	if r.ExpectedStart == nil {
		return fmt.Sprintf("Job %d would wait in partition %s; no start time is known (%s)", r.JobID, r.Partition, r.PendingReason)
	}
	if loc == nil {
		loc = time.Local
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Job %d to start at %s", r.JobID, r.ExpectedStart.In(loc).Format(layout))
	// A job placed on no node (-N 0) is "using 0 processors on nodes " in
	// sbatch's words; an expected start with no placement known names none.
	if len(r.Nodes) > 0 || r.NoNodes {
		fmt.Fprintf(&b, " using %d processors on nodes %s", r.CPUs, jobspec.CompressHostlist(r.Nodes))
	}
	fmt.Fprintf(&b, " in partition %s", r.Partition)
	return b.String()
}
