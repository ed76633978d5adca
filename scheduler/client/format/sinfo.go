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
	"github.com/parityhpc/parity/topology"
)

// sinfo's layouts, as Slurm 22.05's code has them rather than as its man
// page documents them ("%#P"): the node list and partition columns are at
// least 9 wide and grow to the widest value ('#' with a minimum), and -N
// right-justifies the partition ("%.9P" grown), as real sinfo prints it.
const (
	SinfoDefault   = "%#9P %.5a %.10l %.6D %.6t %N"
	SinfoLong      = "%#9P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
	SinfoNodes     = "%#9N %.6D %.#9P %6t"
	SinfoNodesLong = "%#9N %.6D %.#9P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E"
	SinfoSummary   = "%#9P %.5a %.10l %.16F %N"
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
	// Date prints the current time above the header, as sinfo -l does.
	Date bool
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

// ParseSinfoLongFormat reads an sinfo -O (--Format) field list.
func ParseSinfoLongFormat(spec string) (Layout, error) {
	return ParseLongLayout(spec, sinfoFields)
}

// sinfoFields maps sinfo -O names (lower case) to the codes that render
// them, as Slurm 22.05's sinfo reads them; names Parity has no data for
// (Port, FreeMem, CPUsLoad...) are left out, so they are rejected.
var sinfoFields = map[string]byte{
	"available":        'a',
	"cores":            'Y',
	"cpus":             'c',
	"cpusstate":        'C',
	"defaulttime":      'L',
	"disk":             'd',
	"features":         'f',
	"features_act":     'b',
	"gres":             'G',
	"groups":           'g',
	"memory":           'm',
	"nodeai":           'A',
	"nodeaiot":         'F',
	"nodehost":         'n',
	"nodelist":         'N',
	"nodes":            'D',
	"oversubscribe":    'h',
	"share":            'h',
	"partition":        'P',
	"partitionname":    'R',
	"reason":           'E',
	"root":             'r',
	"size":             's',
	"socketcorethread": 'z',
	"sockets":          'X',
	"statecompact":     't',
	"statelong":        'T',
	"threads":          'Z',
	"time":             'l',
	"timestamp":        'H',
	"user":             'u',
	"weight":           'w',
}

// Sinfo writes partitions and nodes through an sinfo layout: per partition
// (in the order given) the nodes of that partition present in nodes,
// merged into one line per distinct set of printed fields unless PerNode.
// A layout without partition fields lists every node once. Lines are
// ordered as sinfo orders them: within a partition by Slurm's numeric node
// state, highest first; with PerNode by node name alone.
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
		sortByState(rows)
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
		groups := groupNodes(p, in, l, cols, o.PerNode)
		sortByState(groups)
		rows = append(rows, groups...)
	}
	if o.PerNode {
		// sinfo -N sorts by node name only; stable, so a node in several
		// partitions keeps their order.
		slices.SortStableFunc(rows, func(a, b nodeGroup) int { return naturalCompare(groupName(a), groupName(b)) })
	}
	if o.Date && !o.NoHeader {
		if _, err := io.WriteString(w, o.dateLine()); err != nil {
			return err
		}
	}
	return table(w, l, cols, rows, !o.NoHeader)
}

// sortByState orders groups by Slurm's node state number, highest first
// (sinfo's default "-t" key), keeping the order of equal ones.
func sortByState(gs []nodeGroup) {
	state := func(g nodeGroup) int {
		if len(g.nodes) == 0 {
			return -1
		}
		return slurmNodeState(g.nodes[0])
	}
	slices.SortStableFunc(gs, func(a, b nodeGroup) int { return cmp.Compare(state(b), state(a)) })
}

func groupName(g nodeGroup) string {
	if len(g.nodes) == 0 {
		return ""
	}
	return g.nodes[0].GetName()
}

// naturalCompare orders names with their digit runs compared as numbers
// ("n2" before "n10"), as sinfo orders node names.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitRun is the length of the run of ASCII digits s starts with.
func digitRun(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func hasReason(n *pb.Node) bool {
	s := NodeStateLong(n)
	return n.GetReason() != "" || strings.HasPrefix(s, "down") || strings.HasPrefix(s, "drain")
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
		'z': {"S:C:T", first(func(n *pb.Node) string {
			s, c, t, ok := nodeSCT(n)
			if !ok {
				return "N/A"
			}
			return fmt.Sprintf("%d:%d:%d", s, c, t)
		})},
		'X': {"SOCKETS", first(sctPart(0))},
		'Y': {"CORES", first(sctPart(1))},
		'Z': {"THREADS", first(sctPart(2))},
		// Parity tracks no scratch disk or scheduling weight: Slurm's
		// defaults (TmpDisk=0, Weight=1).
		'd': {"TMP_DISK", first(func(*pb.Node) string { return "0" })},
		'w': {"WEIGHT", first(func(*pb.Node) string { return "1" })},
		'G': {"GRES", first(func(n *pb.Node) string { return cmp.Or(NodeGRES(n), "(null)") })},
		'f': {"AVAIL_FEATURES", first(func(n *pb.Node) string { return orNull(strings.Join(n.GetFeatures(), ",")) })},
		'b': {"ACTIVE_FEATURES", first(func(n *pb.Node) string { return orNull(strings.Join(n.GetFeatures(), ",")) })},
		'E': {"REASON", first(func(n *pb.Node) string { return cmp.Or(n.GetReason(), "none") })},
		'u': {"USER", first(func(n *pb.Node) string { return cmp.Or(n.GetReasonUser(), "Unknown") })},
		'H': {"TIMESTAMP", first(func(n *pb.Node) string { return Stamp(n.GetReasonTime(), e.loc(), "Unknown") })},
		'C': {"CPUS(A/I/O/T)", cpuCounts},
		'F': {"NODES(A/I/O/T)", nodeCounts},
		'A': {"NODES(A/I)", func(g nodeGroup) string { a, i, _ := countNodes(g); return fmt.Sprintf("%d/%d", a, i) }},
	}
}

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
