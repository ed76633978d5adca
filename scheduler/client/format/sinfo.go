package format

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// sinfo's layouts.
const (
	SinfoDefault   = "%#P %.5a %.10l %.6D %.6t %N"
	SinfoLong      = "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
	SinfoNodes     = "%#N %.6D %#P %6t"
	SinfoNodesLong = "%#N %.6D %#P %11T %.4c %.8m %20G %20E"
	SinfoSummary   = "%#P %.5a %.10l %.16F %N"
	SinfoReasons   = "%20E %9u %19H %N"
	// GPULayout is Parity's per-GPU view (parity nodes --gpus).
	GPULayout = "%#N %.3i %#y %#t %.8j %#u %E"
)

// SinfoOptions control Sinfo.
type SinfoOptions struct {
	Env
	NoHeader bool
	// PerNode prints one line per node (sinfo -N) instead of merging nodes
	// whose printed fields are equal.
	PerNode bool
	// ReasonsOnly keeps nodes that are down or drained or carry a reason
	// (sinfo -R).
	ReasonsOnly bool
	// ShowEmpty prints partitions without nodes in view as "0 n/a".
	ShowEmpty bool
}

// nodeGroup is one sinfo line: nodes of one partition (nil when the layout
// names no partition field) that print alike.
type nodeGroup struct {
	part  *pb.Partition
	nodes []*pb.Node
}

// aggregate codes sum or list over a group; the others decide the grouping.
const aggregateCodes = "DNnCF"

// partitionCodes make a layout partition-scoped.
const partitionCodes = "PRalLsrhg"

// ParseSinfoFormat reads an sinfo -o format.
func ParseSinfoFormat(spec string) (Layout, error) {
	return ParseLayout(spec, knownIn(sinfoColumns(Env{})))
}

// Sinfo writes partitions and nodes through an sinfo layout: per partition
// (in the order given) the nodes of that partition present in nodes,
// merged into one line per distinct set of printed fields unless PerNode.
// A layout without partition fields lists every node once.
func Sinfo(w io.Writer, parts []*pb.Partition, nodes []*pb.Node, l Layout, o SinfoOptions) error {
	byName := make(map[string]*pb.Node, len(nodes))
	for _, n := range nodes {
		if !o.ReasonsOnly || hasReason(n) {
			byName[n.GetName()] = n
		}
	}
	cols := sinfoColumns(o.Env)
	scoped := slices.ContainsFunc(l.Codes(), func(c byte) bool { return strings.IndexByte(partitionCodes, c) >= 0 })
	var rows []nodeGroup
	if !scoped {
		var in []*pb.Node
		for _, n := range nodes {
			if byName[n.GetName()] != nil {
				in = append(in, n)
			}
		}
		rows = groupNodes(nil, in, l, cols, o.PerNode)
	}
	for _, p := range parts {
		if !scoped {
			break
		}
		var in []*pb.Node
		for _, name := range p.GetNodeNames() {
			if n := byName[name]; n != nil {
				in = append(in, n)
			}
		}
		if len(in) == 0 && o.ShowEmpty {
			rows = append(rows, nodeGroup{part: p})
		}
		rows = append(rows, groupNodes(p, in, l, cols, o.PerNode)...)
	}
	return table(w, l, cols, rows, !o.NoHeader)
}

func hasReason(n *pb.Node) bool {
	s := NodeStateLong(n)
	return n.GetReason() != "" || strings.HasPrefix(s, "DOWN") || strings.HasPrefix(s, "DRAIN")
}

// groupNodes merges nodes whose non-aggregate fields print the same, in
// the order of each group's first node.
func groupNodes(p *pb.Partition, nodes []*pb.Node, l Layout, cols map[byte]column[nodeGroup], perNode bool) []nodeGroup {
	var out []nodeGroup
	index := map[string]int{}
	for _, n := range nodes {
		one := nodeGroup{part: p, nodes: []*pb.Node{n}}
		if perNode {
			out = append(out, one)
			continue
		}
		var key strings.Builder
		for _, c := range l.Codes() {
			if strings.IndexByte(aggregateCodes, c) < 0 {
				key.WriteString(cols[c].value(one) + "\x00")
			}
		}
		if i, ok := index[key.String()]; ok {
			out[i].nodes = append(out[i].nodes, n)
			continue
		}
		index[key.String()] = len(out)
		out = append(out, one)
	}
	return out
}

func sinfoColumns(e Env) map[byte]column[nodeGroup] {
	first := func(f func(*pb.Node) string) func(nodeGroup) string {
		return func(g nodeGroup) string {
			if len(g.nodes) == 0 {
				return "n/a"
			}
			return f(g.nodes[0])
		}
	}
	part := func(f func(*pb.Partition) string) func(nodeGroup) string {
		return func(g nodeGroup) string {
			if g.part == nil {
				return "n/a"
			}
			return f(g.part)
		}
	}
	names := func(g nodeGroup) string {
		ns := make([]string, len(g.nodes))
		for i, n := range g.nodes {
			ns[i] = n.GetName()
		}
		return jobspec.CompressHostlist(ns)
	}
	constant := func(v string) func(nodeGroup) string { return part(func(*pb.Partition) string { return v }) }
	return map[byte]column[nodeGroup]{
		'P': {"PARTITION", part(func(p *pb.Partition) string { return p.GetName() + map[bool]string{true: "*"}[p.GetDefault()] })},
		'R': {"PARTITION", part((*pb.Partition).GetName)},
		'a': {"AVAIL", part(func(p *pb.Partition) string { return cmp.Or(strings.ToLower(p.GetState()), "up") })},
		'l': {"TIMELIMIT", part(func(p *pb.Partition) string { return PartitionLimit(p.GetMaxTimeSeconds()) })},
		'L': {"DEFAULTTIME", part(func(p *pb.Partition) string {
			if p.GetDefaultTimeSeconds() <= 0 {
				return "n/a"
			}
			return Elapsed(p.GetDefaultTimeSeconds())
		})},
		's': {"JOB_SIZE", constant("1-infinite")},
		'r': {"ROOT", constant("no")},
		'h': {"OVERSUBSCRIBE", constant("NO")},
		'g': {"GROUPS", constant("all")},
		'D': {"NODES", func(g nodeGroup) string { return strconv.Itoa(len(g.nodes)) }},
		'N': {"NODELIST", names},
		'n': {"HOSTNAMES", names},
		't': {"STATE", first(NodeState)},
		'T': {"STATE", first(NodeStateLong)},
		'c': {"CPUS", first(func(n *pb.Node) string { return strconv.Itoa(int(n.GetCpus())) })},
		'm': {"MEMORY", first(func(n *pb.Node) string { return strconv.FormatInt(n.GetMemoryMb(), 10) })},
		'G': {"GRES", first(func(n *pb.Node) string { return cmp.Or(NodeGRES(n), "(null)") })},
		'f': {"AVAIL_FEATURES", first(func(n *pb.Node) string { return orNull(strings.Join(n.GetFeatures(), ",")) })},
		'b': {"ACTIVE_FEATURES", first(func(n *pb.Node) string { return orNull(strings.Join(n.GetFeatures(), ",")) })},
		'E': {"REASON", first(func(n *pb.Node) string { return cmp.Or(n.GetReason(), "none") })},
		'u': {"USER", first(func(n *pb.Node) string { return cmp.Or(n.GetReasonUser(), "Unknown") })},
		'H': {"TIMESTAMP", first(func(n *pb.Node) string { return Stamp(n.GetReasonTime(), e.loc(), "Unknown") })},
		'C': {"CPUS(A/I/O/T)", cpuCounts},
		'F': {"NODES(A/I/O/T)", nodeCounts},
	}
}

// unavailable reports a node that takes no new work (down, drained,
// unknown, not responding): sinfo counts its free CPUs as "other".
func unavailable(n *pb.Node) bool {
	s := NodeStateLong(n)
	return strings.HasPrefix(s, "DOWN") || strings.HasPrefix(s, "DRAIN") || strings.HasPrefix(s, "UNKNOWN") || strings.HasSuffix(s, "*")
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
	var a, i, o int
	for _, n := range g.nodes {
		switch {
		case unavailable(n):
			o++
		case n.GetAllocCpus() > 0 || len(n.GetJobs()) > 0:
			a++
		default:
			i++
		}
	}
	return fmt.Sprintf("%d/%d/%d/%d", a, i, o, len(g.nodes))
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
