package format

import (
	"github.com/parityhpc/parity/scheduler/api"
	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// Spec is the wire form of a resolved sbatch request, what the command
// line submits. The mapping lives in jsonapi.FromRequest, which the lean
// sbatch (JSON over HTTP, no protobuf) uses too, so both submit the same
// job (several partitions as a list, see FromRequest).
func Spec(r *jobspec.Request) *pb.JobSpec {
	return api.JobSpecFromJSON(jsonapi.FromRequest(r))
}
