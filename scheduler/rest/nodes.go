package rest

import (
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
