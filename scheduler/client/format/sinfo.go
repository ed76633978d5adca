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
