package userverbs

import (
	"github.com/spf13/cobra"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client/format"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

type nodesOptions struct {
	clientFlags
	format, formatLong               string
	partitions, states, nodes        []string
	noHeader, long, perNode, reasons bool
	summarize, gpus, all, exact      bool
	reservations                     bool
}

func newNodesCmdWith(env userEnv) *cobra.Command {
	var o nodesOptions
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "Summarise partitions and nodes (sinfo), or list every GPU's state",
		Long: `Summarise partitions and nodes as sinfo does: one line per partition and
node state, nodes that print alike merged into one host list. -N lists nodes,
-R the reasons nodes are down or drained, -s a summary with A/I/O/T counts,
-o takes sinfo's %-format codes (%P %a %l %D %t %T %N %c %C %m %z %d %w %G
%f %E %u %H %F), -O its field names (partition,nodes:.6,statelong,...: 20
wide unless sized; -O wins over -o). -l prints the current time above the
header. --gpus lists every GPU: node, index, type, state (idle, alloc,
drain), holding job, UUID and drain reason. -T lists reservations.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runNodes(cmd, env, &o) },
	}
	noShortHelp(cmd)
	o.register(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&o.format, "format", "o", "", "output format (sinfo -o codes)")
	fl.StringVarP(&o.formatLong, "Format", "O", "", "output fields by name (sinfo -O: partition,nodes:.6,statelong)")
	fl.StringArrayVarP(&o.partitions, "partition", "p", nil, "only these partitions (comma list)")
	fl.StringArrayVarP(&o.states, "states", "t", nil, "only nodes in these states (idle, mix, alloc, drain, down...; ~ negates)")
	fl.StringArrayVarP(&o.nodes, "nodes", "n", nil, "only these nodes (hostlist)")
	fl.BoolVarP(&o.noHeader, "noheader", "h", false, "no header line")
	fl.BoolVarP(&o.long, "long", "l", false, "long layout")
	fl.BoolVarP(&o.perNode, "Node", "N", false, "one line per node")
	fl.BoolVarP(&o.reasons, "list-reasons", "R", false, "reasons nodes are down, drained or failing")
	fl.BoolVarP(&o.summarize, "summarize", "s", false, "partition summary with node counts A/I/O/T")
	fl.BoolVar(&o.gpus, "gpus", false, "one line per GPU with its state, job and drain reason")
	fl.BoolVarP(&o.reservations, "reservation", "T", false, "list reservations (name, state, start, end, duration, nodes)")
	fl.BoolVarP(&o.all, "all", "a", false, "accepted for sinfo compatibility (every partition is shown)")
	fl.BoolVarP(&o.exact, "exact", "e", false, "accepted for sinfo compatibility (nodes are always grouped exactly)")
	return cmd
}

func (o *nodesOptions) layout() string {
	switch {
	case o.format != "":
		return o.format
	case o.gpus:
		return format.GPULayout
	case o.reasons:
		return format.SinfoReasons
	case o.summarize:
		return format.SinfoSummary
	case o.perNode && o.long:
		return format.SinfoNodesLong
	case o.perNode:
		return format.SinfoNodes
	case o.long:
		return format.SinfoLong
	}
	return format.SinfoDefault
}

func runNodes(cmd *cobra.Command, env userEnv, o *nodesOptions) error {
	if o.reservations {
		return runReservationTable(cmd, env, o)
	}
	var layout format.Layout
	var err error
	switch {
	case o.formatLong != "" && o.gpus:
		return usageError("nodes", "-O (--Format) does not apply to --gpus")
	case o.formatLong != "":
		// sinfo keeps one format, the last given: -O over -o here.
		layout, err = format.ParseSinfoLongFormat(o.formatLong)
	case o.gpus:
		layout, err = format.ParseGPUFormat(o.layout())
	default:
		layout, err = format.ParseSinfoFormat(o.layout())
	}
	if err != nil {
		return usageError("nodes", "%v", err)
	}
	warnLayout(cmd, layout)
	var names []string
	for _, expr := range o.nodes {
		hosts, err := jobspec.ExpandHostlist(expr)
		if err != nil {
			return usageError("nodes", "--nodes: %v", err)
		}
		names = append(names, hosts...)
	}
	s, err := o.dial(cmd, "nodes", env)
	if err != nil {
		return err
	}
	defer s.close()
	info, err := s.c.Info(s.ctx)
	if err != nil {
		return s.fail(err)
	}
	all, err := s.c.ListNodes(s.ctx, &pb.ListNodesRequest{Names: names})
	if err != nil {
		return s.fail(err)
	}
	parts := info.GetPartitions()
	if want := format.SplitList(o.partitions); len(want) > 0 {
		parts = nil
		for _, p := range info.GetPartitions() {
			for _, w := range want {
				if p.GetName() == w {
					parts = append(parts, p)
				}
			}
		}
		if len(parts) == 0 {
			return usageError("nodes", "--partition: no partition named %v", want)
		}
	}
	states := format.SplitList(o.states)
	var nodes []*pb.Node
	for _, n := range all {
		if format.NodeMatchesState(n, states) && inPartitions(n, parts) {
			nodes = append(nodes, n)
		}
	}
	w := cmd.OutOrStdout()
	if o.json {
		// sinfo --json's own sinfo array is not in slurmrestd's document:
		// the nodes it summarises are printed as GET nodes answers them.
		return writeNodesJSON(s, w, nodes, info)
	}
	if o.gpus {
		return format.GPUs(w, nodes, layout, o.noHeader)
	}
	// Like sinfo, -l prints the time above the header (with -o too).
	return format.Sinfo(w, parts, nodes, layout, format.SinfoOptions{Env: env.render(), NoHeader: o.noHeader, PerNode: o.perNode,
		ReasonsOnly: o.reasons, ShowEmpty: len(states) == 0 && len(names) == 0, Date: o.long})
}

func inPartitions(n *pb.Node, parts []*pb.Partition) bool {
	for _, p := range parts {
		for _, name := range p.GetNodeNames() {
			if name == n.GetName() {
				return true
			}
		}
	}
	return false
}

// runReservationTable is sinfo -T.
func runReservationTable(cmd *cobra.Command, env userEnv, o *nodesOptions) error {
	s, err := o.dial(cmd, "nodes", env)
	if err != nil {
		return err
	}
	defer s.close()
	rs, err := s.c.ListReservations(s.ctx)
	if err != nil {
		return s.fail(err)
	}
	if o.json {
		return writeMessagesJSON(cmd.OutOrStdout(), "reservations", rs)
	}
	return format.ReservationTable(cmd.OutOrStdout(), rs, env.render(), !o.noHeader)
}
