package controller

import (
	"cmp"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
)

func contains(list []*job, j *job) bool { return slices.Contains(list, j) }

func sortActive(list []*job) {
	slices.SortFunc(list, func(a, b *job) int { return cmp.Compare(a.Core.ID, b.Core.ID) })
}

func sortIDs(ids []core.JobID) { slices.Sort(ids) }

type (
	gresInventory = gres.Inventory
	gresSample    = gres.Sample
)

// cloneSpec copies a spec so a launch order can carry the script without
// touching the in-memory record.
func cloneSpec(s *pb.JobSpec) *pb.JobSpec {
	if s == nil {
		return &pb.JobSpec{}
	}
	return proto.CloneOf(s)
}

func sortedJobIDsOf(m map[core.JobID]*job) []core.JobID {
	out := make([]core.JobID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
