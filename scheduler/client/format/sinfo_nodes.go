package format

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/topology"
)

// nodeSCT is a node's sockets, cores per socket and threads per core:
// as the controller reports them from the agent's registration, else from
// the inventory when the controller sent it, else Slurm's
// default for a node configured with a CPU count alone (each CPU a socket
// of one single-threaded core). ok is false when nothing is known.
func nodeSCT(n *pb.Node) (sockets, cores, threads int, ok bool) {
	if n.GetSockets() > 0 {
		return int(n.GetSockets()), int(max(n.GetCoresPerSocket(), 1)), int(max(n.GetThreadsPerCore(), 1)), true
	}
	h := n.GetInventory().GetHost()
	if s, c := int(h.GetSockets()), int(h.GetCores()); s > 0 && c > 0 {
		cpus := int(n.GetCpus())
		if set, err := topology.ParseCPUList(h.GetCpus()); err == nil && set.Count() > 0 {
			cpus = set.Count()
		}
		return s, max(c/s, 1), max(cpus/c, 1), true
	}
	if cpus := int(n.GetCpus()); cpus > 0 {
		return cpus, 1, 1, true
	}
	return 0, 0, 0, false
}

// sctPart renders one of nodeSCT's numbers (0 sockets, 1 cores, 2 threads).
func sctPart(i int) func(*pb.Node) string {
	return func(n *pb.Node) string {
		s, c, t, ok := nodeSCT(n)
		if !ok {
			return "N/A"
		}
		return strconv.Itoa([]int{s, c, t}[i])
	}
}

// unavailable reports a node that takes no new work (down, drained,
// unknown, not responding): sinfo counts its free CPUs as "other".
func unavailable(n *pb.Node) bool {
	s := NodeStateLong(n)
	return strings.HasPrefix(s, "down") || strings.HasPrefix(s, "drain") || strings.HasPrefix(s, "unknown") || strings.HasSuffix(s, "*")
}

func cpuCounts(g nodeGroup) string {
	var a, i, o, t int
	for _, n := range g.nodes {
		total, alloc := int(n.GetCpus()), int(n.GetAllocCpus())
		t += total
		a += alloc
		if unavailable(n) {
			o += total - alloc
		} else {
			i += total - alloc
		}
	}
	return fmt.Sprintf("%d/%d/%d/%d", a, i, o, t)
}

func nodeCounts(g nodeGroup) string {
	a, i, o := countNodes(g)
	return fmt.Sprintf("%d/%d/%d/%d", a, i, o, len(g.nodes))
}

// countNodes counts a group's nodes allocated, idle and other: a node
// running jobs is allocated even while it drains (Slurm's drng n1 is
// 1/0/0/1), an unavailable one without jobs other.
func countNodes(g nodeGroup) (a, i, o int) {
	for _, n := range g.nodes {
		switch {
		case n.GetAllocCpus() > 0 || len(n.GetJobs()) > 0:
			a++
		case unavailable(n):
			o++
		default:
			i++
		}
	}
	return a, i, o
}

// NodeGRES renders a node's GPUs as sinfo's GRES column does
// ("gpu:h100:8"), counting whole devices (not their partitions) by type.
func NodeGRES(n *pb.Node) string {
	counts := map[string]int{}
	var types []string
	for _, g := range n.GetGpus() {
		if g.GetParent() != "" {
			continue
		}
		if counts[g.GetType()] == 0 {
			types = append(types, g.GetType())
		}
		counts[g.GetType()]++
	}
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = "gpu:" + t + ":" + strconv.Itoa(counts[t])
		if t == "" {
			parts[i] = "gpu:" + strconv.Itoa(counts[t])
		}
	}
	return strings.Join(parts, ",")
}

// gpuRow is one device in the per-GPU view.
type gpuRow struct {
	node *pb.Node
	gpu  *pb.GPU
}

// ParseGPUFormat reads a per-GPU layout (codes N i y t j u E p).
func ParseGPUFormat(spec string) (Layout, error) {
	return ParseLayout(spec, knownIn(gpuColumns()))
}

// GPUs writes one line per device of every node: node, local index, type,
// state (idle, alloc, drain), holding job, UUID and drain reason.
func GPUs(w io.Writer, nodes []*pb.Node, l Layout, noHeader bool) error {
	var rows []gpuRow
	for _, n := range nodes {
		for _, g := range n.GetGpus() {
			rows = append(rows, gpuRow{n, g})
		}
	}
	return table(w, l, gpuColumns(), rows, !noHeader)
}

func gpuColumns() map[byte]column[gpuRow] {
	return map[byte]column[gpuRow]{
		'N': {"NODE", func(r gpuRow) string { return r.node.GetName() }},
		'i': {"IDX", func(r gpuRow) string { return strconv.Itoa(int(r.gpu.GetIndex())) }},
		'y': {"TYPE", func(r gpuRow) string { return cmp.Or(r.gpu.GetType(), "-") }},
		't': {"STATE", func(r gpuRow) string { return cmp.Or(r.gpu.GetState(), "-") }},
		'j': {"JOBID", func(r gpuRow) string {
			if r.gpu.GetJobId() == 0 {
				return "-"
			}
			return strconv.FormatUint(r.gpu.GetJobId(), 10)
		}},
		'u': {"UUID", func(r gpuRow) string { return r.gpu.GetUuid() }},
		'p': {"PARENT", func(r gpuRow) string { return cmp.Or(r.gpu.GetParent(), "-") }},
		'E': {"REASON", func(r gpuRow) string { return r.gpu.GetDrainReason() }},
	}
}
