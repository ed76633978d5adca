package format

import (
	"slices"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// givenEmpty reports whether the job's option (field, the request's JSON
// name) was last given an empty value: Slurm keeps the empty string and
// prints it (Account=, Features=, squeue's %a as nothing), where an
// option never given prints (null).
func givenEmpty(s *pb.JobSpec, field string) bool {
	return slices.Contains(s.GetEmptyOptions(), field)
}

// textOrNull is v, or for an empty v "" when the option was given empty
// and (null) when it was not given.
func textOrNull(s *pb.JobSpec, field, v string) string {
	if v == "" && !givenEmpty(s, field) {
		return "(null)"
	}
	return v
}
