package controller

import (
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

const mib = 1 << 20

// setUsage keeps what node measured for the job's run, replacing an
// earlier report of the same node (agents may report an end twice). It
// reports whether anything changed.
func (j *job) setUsage(node string, u *pb.JobUsage) bool { return setNodeUsage(&j.usage, node, u) }

// setNodeUsage is setUsage on a run's list of per-node reports.
func setNodeUsage(list *[]*pb.NodeUsage, node string, u *pb.JobUsage) bool {
	if u == nil {
		return false
	}
	for _, nu := range *list {
		if nu.GetNode() == node {
			if proto.Equal(nu.GetUsage(), u) {
				return false
			}
			nu.Usage = u
			return true
		}
	}
	*list = append(*list, &pb.NodeUsage{Node: node, Usage: u})
	return true
}

// ledgerUsage folds the nodes' reports into the ledger's per-job usage:
// CPU time adds up, peaks are the largest seen, and the GPU utilisation
// mean is over every sample of every GPU the job held (so a GPU sampled
// longer weighs more, as it was held longer).
func ledgerUsage(nodes []*pb.NodeUsage) accounting.JobUsage {
	var u accounting.JobUsage
	var samples, weighted float64
	for _, nu := range nodes {
		r := nu.GetUsage()
		u.CPUTime += time.Duration(r.GetCpuTimeMs()) * time.Millisecond
		u.MaxRSSMiB = max(u.MaxRSSMiB, float64(r.GetMemoryPeakBytes())/mib)
		for _, g := range r.GetGpus() {
			n := float64(g.GetSamples())
			samples += n
			weighted += g.GetMeanUtilPct() * n
			u.GPUUtilMax = max(u.GPUUtilMax, g.GetMaxUtilPct())
			u.GPUMemMaxMiB = max(u.GPUMemMaxMiB, float64(g.GetMaxMemoryBytes())/mib)
		}
	}
	if samples > 0 {
		u.GPUUtilMean = weighted / samples
	}
	return u
}
