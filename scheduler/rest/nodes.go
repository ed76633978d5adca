package rest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

func (h *Handler) listNodes(c *call, req *pb.ListNodesRequest) ([]*pb.Node, error) {
	var out []*pb.Node
	err := h.b.Nodes.List(req, &collect[pb.ListNodesResponse]{ctx: c.ctx, send: func(m *pb.ListNodesResponse) error {
		out = append(out, m.GetNodes()...)
		return nil
	}})
	return out, err
}

func serveNodes(h *Handler, c *call) (any, error) {
	if _, err := updateTime(c); err != nil {
		return nil, err
	}
	if err := queryFlags(c); err != nil {
		return nil, err
	}
	nodes, err := h.listNodes(c, &pb.ListNodesRequest{})
	if err != nil {
		return nil, err
	}
	return h.nodesAnswer(nodes), nil
}

func serveNode(h *Handler, c *call) (any, error) {
	if _, err := updateTime(c); err != nil {
		return nil, err
	}
	if err := queryFlags(c); err != nil {
		return nil, err
	}
	n, err := h.b.Nodes.Get(c.ctx, &pb.GetNodeRequest{Name: c.r.PathValue("node_name")})
	if err != nil {
		return nil, err
	}
	return h.nodesAnswer([]*pb.Node{n}), nil
}

func (h *Handler) nodesAnswer(nodes []*pb.Node) *nodesResp {
	out := &nodesResp{Nodes: make([]*nodeInfo, 0, len(nodes)), LastUpdate: num(h.b.Now().Unix())}
	for _, n := range nodes {
		out.Nodes = append(out.Nodes, h.toNode(n))
	}
	return out
}

// toNode maps a Parity node to v0.0.44_node.
func (h *Handler) toNode(n *pb.Node) *nodeInfo {
	cores := n.GetSockets() * n.GetCoresPerSocket()
	ni := &nodeInfo{Name: n.GetName(), Hostname: n.GetName(), ClusterName: h.b.ClusterName, State: nodeState(n),
		CPUs: n.GetCpus(), EffectiveCPUs: n.GetCpus(), Cores: n.GetCoresPerSocket(), Sockets: n.GetSockets(),
		Threads: n.GetThreadsPerCore(), Boards: 1, RealMemory: n.GetMemoryMb(), AllocMemory: n.GetAllocMemoryMb(),
		AllocCPUs: n.GetAllocCpus(), AllocIdleCPUs: max(n.GetCpus()-n.GetAllocCpus(), 0),
		Features: orEmpty(n.GetFeatures()), ActiveFeatures: orEmpty(n.GetFeatures()), Partitions: orEmpty(n.GetPartitions()),
		Reason: n.GetReason(), ReasonSetBy: n.GetReasonUser(), ReasonChangedAt: epoch(n.GetReasonTime()),
		LastBusy: epoch(n.GetLastHeartbeat())}
	if cores == 0 {
		ni.Cores = n.GetCpus()
	}
	gres, used, drained := gpuGres(n.GetGpus())
	ni.Gres, ni.GresUsed, ni.GresDrained = gres, used, drained
	ni.Tres = fmt.Sprintf("cpu=%d,mem=%dM,billing=%d", n.GetCpus(), n.GetMemoryMb(), n.GetCpus())
	if total := len(n.GetGpus()); total > 0 {
		ni.Tres += fmt.Sprintf(",gres/gpu=%d", total)
	}
	if n.GetAllocCpus() > 0 || n.GetAllocMemoryMb() > 0 {
		ni.TresUsed = fmt.Sprintf("cpu=%d,mem=%dM", n.GetAllocCpus(), n.GetAllocMemoryMb())
	}
	return ni
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// nodeState is Slurm's state list: the base state and its flags.
func nodeState(n *pb.Node) []string {
	base := strings.ToUpper(n.GetState())
	switch base {
	case "IDLE", "DOWN", "ALLOCATED", "MIXED", "UNKNOWN", "FUTURE":
	default:
		base = "UNKNOWN"
	}
	out := []string{base}
	for _, f := range n.GetFlags() {
		switch f := strings.ToUpper(f); f {
		case "DRAIN", "NOT_RESPONDING", "COMPLETING", "MAINTENANCE", "RESERVED", "FAIL":
			out = append(out, f)
		}
	}
	return out
}

// gpuGres is the node's gres, gres_used and gres_drained strings, by type.
func gpuGres(gpus []*pb.GPU) (string, string, string) {
	total, used, drained := map[string]int{}, map[string]int{}, map[string]int{}
	var types []string
	for _, g := range gpus {
		t := g.GetType()
		if _, ok := total[t]; !ok {
			types = append(types, t)
		}
		total[t]++
		switch g.GetState() {
		case "alloc":
			used[t]++
		case "drain":
			drained[t]++
		}
	}
	slices.Sort(types)
	var g, u, d []string
	for _, t := range types {
		name := "gpu"
		if t != "" {
			name += ":" + t
		}
		g = append(g, fmt.Sprintf("%s:%d", name, total[t]))
		u = append(u, fmt.Sprintf("%s:%d", name, used[t]))
		if drained[t] > 0 {
			d = append(d, fmt.Sprintf("%s:%d", name, drained[t]))
		}
	}
	return strings.Join(g, ","), strings.Join(u, ","), strings.Join(d, ",")
}

// nodeUpdate is the part of v0.0.44_update_node_msg Parity honours.
type nodeUpdate struct {
	State  []string `json:"state"`
	Reason *string  `json:"reason"`
}

func serveNodeUpdate(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	var u nodeUpdate
	if err := decodeObject(c, body, "update_node_msg", updateNodeProps(), &u, true); err != nil {
		return nil, err
	}
	if len(u.State) != 1 {
		return nil, status.Errorf(codes.InvalidArgument, "update_node_msg.state=%q: give exactly one state (DRAIN, DOWN, RESUME, UNDRAIN, IDLE)", u.State)
	}
	_, err = h.b.Nodes.Update(c.ctx, &pb.UpdateNodeRequest{Nodes: c.r.PathValue("node_name"), State: u.State[0], Reason: deref(u.Reason)})
	if err != nil {
		return nil, err
	}
	return &envelope{}, nil
}

func servePartitions(h *Handler, c *call) (any, error) { return h.partitions(c, "") }

func servePartition(h *Handler, c *call) (any, error) {
	return h.partitions(c, c.r.PathValue("partition_name"))
}

func (h *Handler) partitions(c *call, only string) (any, error) {
	if _, err := updateTime(c); err != nil {
		return nil, err
	}
	if err := queryFlags(c); err != nil {
		return nil, err
	}
	info, err := h.b.Cluster.Info(c.ctx, &pb.InfoRequest{})
	if err != nil {
		return nil, err
	}
	out := &partitionsResp{Partitions: []*partitionInfo{}, LastUpdate: num(h.b.Now().Unix())}
	for _, p := range info.GetPartitions() {
		if only == "" || p.GetName() == only {
			out.Partitions = append(out.Partitions, h.toPartition(p))
		}
	}
	if only != "" && len(out.Partitions) == 0 {
		return nil, status.Errorf(codes.NotFound, "partition %q: no such partition", only)
	}
	return out, nil
}

// toPartition maps a Parity partition to v0.0.44_partition_info.
func (h *Handler) toPartition(p *pb.Partition) *partitionInfo {
	pi := &partitionInfo{Name: p.GetName(), Cluster: h.b.ClusterName, GraceTime: int32(p.GetGraceTimeSeconds())}
	pi.Nodes.Configured, pi.Nodes.Total = p.GetNodes(), p.GetTotalNodes()
	pi.CPUs.Total = p.GetTotalCpus()
	pi.Tres.BillingWeights = p.GetBillingWeights()
	pi.Tres.Configured = fmt.Sprintf("cpu=%d,mem=%dM,node=%d,billing=%d", p.GetTotalCpus(), p.GetTotalMemoryMb(), p.GetTotalNodes(), p.GetTotalCpus())
	if g := p.GetTotalGpus(); g > 0 {
		pi.Tres.Configured += fmt.Sprintf(",gres/gpu=%d", g)
	}
	pi.Defaults.MemoryPerCPU = p.GetDefMemPerCpuMb()
	pi.Defaults.PartitionMemoryPerCPU = unset()
	if p.GetDefMemPerCpuMb() > 0 {
		pi.Defaults.PartitionMemoryPerCPU = num(p.GetDefMemPerCpuMb())
	}
	pi.Defaults.Time = minutesOrInf(p.GetDefaultTimeSeconds())
	pi.Maximums.Time = minutesOrInf(p.GetMaxTimeSeconds())
	pi.Maximums.Nodes = numOrInf(int64(p.GetMaxNodes()))
	pi.Minimums.Nodes = p.GetMinNodes()
	pi.Priority.JobFactor, pi.Priority.Tier = p.GetPriorityJobFactor(), p.GetPriorityTier()
	state := strings.ToUpper(p.GetState())
	if state != "UP" && state != "DOWN" && state != "DRAIN" && state != "INACTIVE" {
		state = "UNKNOWN"
	}
	pi.Partition.State = []string{state}
	return pi
}

func minutesOrInf(sec int64) *noVal {
	if sec <= 0 {
		return infinite()
	}
	return num(int64((time.Duration(sec) * time.Second).Minutes()))
}

func servePing(h *Handler, c *call) (any, error) {
	start := h.b.Now()
	if _, err := h.b.Cluster.WhoAmI(c.ctx, &pb.WhoAmIRequest{}); err != nil {
		return nil, err
	}
	host := c.r.Host
	return &pingResp{Pings: []controllerPing{{Hostname: host, Pinged: "UP", Responding: true,
		Latency: h.b.Now().Sub(start).Microseconds(), Mode: "primary", Primary: true}}}, nil
}

func serveDiag(h *Handler, c *call) (any, error) {
	info, err := h.b.Cluster.Info(c.ctx, &pb.InfoRequest{})
	if err != nil {
		return nil, err
	}
	by := info.GetJobsByState()
	now := h.b.Now().Unix()
	st := diagStats{ReqTime: num(now), ReqTimeStart: epoch(info.GetStarted()),
		ScheduleCycleLast: int32(info.GetLastPassDuration().AsDuration().Microseconds()),
		JobsPending:       by["PENDING"], JobsRunning: by["RUNNING"], JobsCompleted: by["COMPLETED"],
		JobsCanceled: by["CANCELLED"], JobsFailed: by["FAILED"] + by["NODE_FAIL"] + by["TIMEOUT"] + by["OUT_OF_MEMORY"],
		ScheduleQueueLen: by["PENDING"], JobStatesTS: num(now), BfWhenLastCycle: epoch(info.GetLastPass()), BfActive: false}
	return &diagResp{Statistics: st}, nil
}
