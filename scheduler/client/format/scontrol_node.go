package format

import (
	"cmp"
	"io"
	"strconv"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// ShowNodes writes nodes as scontrol show node does. Per-GPU drains show
// as GresDrain=; Details adds one line per device.
func ShowNodes(w io.Writer, nodes []*pb.Node, o ShowOptions) error {
	recs := make([]record, len(nodes))
	for i, n := range nodes {
		recs[i] = nodeRecord(n, o)
	}
	return writeRecords(w, recs, o.OneLiner)
}

func nodeRecord(n *pb.Node, o ShowOptions) record {
	features := orNull(strings.Join(n.GetFeatures(), ","))
	var used, drained []*pb.GPU
	for _, g := range n.GetGpus() {
		switch g.GetState() {
		case "alloc":
			used = append(used, g)
		case "drain":
			drained = append(drained, g)
		}
	}
	gres := []kv{{"Gres", cmp.Or(NodeGRES(n), "(null)")}}
	sockets, cores, threads := "N/A", "N/A", "N/A"
	if s, c, t, ok := nodeSCT(n); ok {
		sockets, cores, threads = strconv.Itoa(s), strconv.Itoa(c), strconv.Itoa(t)
	}
	cpus := strconv.Itoa(int(n.GetCpus()))
	r := record{
		{{"NodeName", n.GetName()}, {"CoresPerSocket", cores}},
		{{"CPUAlloc", strconv.Itoa(int(n.GetAllocCpus()))}, {"CPUEfctv", cpus}, {"CPUTot", cpus}},
		{{"AvailableFeatures", features}},
		{{"ActiveFeatures", features}},
		gres,
		{{"GresUsed", gresUsed(n, used)}},
	}
	if len(drained) > 0 {
		r = append(r, []kv{{"GresDrain", gpuUse(drained)}})
	}
	r = append(r,
		[]kv{{"NodeAddr", n.GetName()}, {"NodeHostName", n.GetName()}},
		[]kv{{"RealMemory", strconv.FormatInt(n.GetMemoryMb(), 10)}, {"AllocMem", strconv.FormatInt(n.GetAllocMemoryMb(), 10)},
			{"Sockets", sockets}, {"Boards", "1"}},
		// No scratch disk, weight or owner is configured: Slurm's defaults.
		[]kv{{"State", NodeStateFull(n)}, {"ThreadsPerCore", threads}, {"TmpDisk", "0"}, {"Weight", "1"}, {"Owner", "N/A"}, {"MCS_label", "N/A"}},
		[]kv{{"Partitions", orNull(strings.Join(n.GetPartitions(), ","))}},
		[]kv{{"LastHeartbeat", Stamp(n.GetLastHeartbeat(), o.loc(), "None")}},
		[]kv{{"CfgTRES", nodeTRES(int(n.GetCpus()), n.GetMemoryMb(), topLevel(n.GetGpus()))}},
		[]kv{{"AllocTRES", allocNodeTRES(n, len(used))}},
	)
	if n.GetReason() != "" {
		r = append(r, []kv{{"Reason", reasonText(n, o)}})
	}
	if o.Details {
		for _, g := range n.GetGpus() {
			line := []kv{{"  GPU", strconv.Itoa(int(g.GetIndex()))}, {"GpuType", orNull(g.GetType())}, {"UUID", g.GetUuid()}, {"GpuState", g.GetState()}}
			if g.GetParent() != "" {
				line = append(line, kv{"GpuParent", g.GetParent()})
			}
			if g.GetJobId() != 0 {
				line = append(line, kv{"GpuJobId", strconv.FormatUint(g.GetJobId(), 10)})
			}
			if g.GetDrainReason() != "" {
				line = append(line, kv{"GpuReason", g.GetDrainReason()})
			}
			r = append(r, line)
		}
	}
	return r
}

// reasonText is "text [user@time]", as scontrol shows a node's reason.
func reasonText(n *pb.Node, o ShowOptions) string {
	who := cmp.Or(n.GetReasonUser(), "Unknown")
	return n.GetReason() + " [" + who + "@" + Stamp(n.GetReasonTime(), o.loc(), "Unknown") + "]"
}

func gresUsed(n *pb.Node, used []*pb.GPU) string {
	if len(used) > 0 {
		return gpuUse(used)
	}
	if NodeGRES(n) == "" {
		return "(null)"
	}
	return NodeGRES(n) + "(IDX:N/A)"
}

func topLevel(gs []*pb.GPU) int {
	k := 0
	for _, g := range gs {
		if g.GetParent() == "" {
			k++
		}
	}
	return k
}

func nodeTRES(cpus int, memMB int64, gpus int) string {
	parts := []string{"cpu=" + strconv.Itoa(cpus), "mem=" + jobspec.FormatMemory(memMB)}
	if gpus > 0 {
		parts = append(parts, "gres/gpu="+strconv.Itoa(gpus))
	}
	return strings.Join(parts, ",")
}

func allocNodeTRES(n *pb.Node, gpus int) string {
	if n.GetAllocCpus() == 0 && n.GetAllocMemoryMb() == 0 && gpus == 0 {
		return "(null)"
	}
	return nodeTRES(int(n.GetAllocCpus()), n.GetAllocMemoryMb(), gpus)
}
