package controller

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	cstate "github.com/parityhpc/parity/scheduler/state"
	"github.com/parityhpc/parity/topology"
)

type nodesService struct {
	pb.UnimplementedNodesServer
	c *Controller
}

// List streams the nodes the filter selects in messages under the chunk
// bound.
func (s *nodesService) List(req *pb.ListNodesRequest, stream grpc.ServerStreamingServer[pb.ListNodesResponse]) error {
	resp, err := s.list(req)
	if err != nil {
		return err
	}
	return sendChunks(resp.GetNodes(), s.c.listChunkBytes(), func(nodes []*pb.Node) error {
		return stream.Send(&pb.ListNodesResponse{Nodes: nodes})
	})
}

func (s *nodesService) list(req *pb.ListNodesRequest) (*pb.ListNodesResponse, error) {
	c := s.c
	var want map[string]bool
	for _, expr := range req.GetNames() {
		names, err := topology.ExpandHostlist(expr)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "nodes=%q: %v", expr, err)
		}
		if want == nil {
			want = map[string]bool{}
		}
		for _, n := range names {
			want[n] = true
		}
	}
	var part map[string]bool
	if req.GetPartition() != "" {
		p, ok := c.pcfg().Partition(req.GetPartition())
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "partition=%s: invalid partition name specified", req.GetPartition())
		}
		part = make(map[string]bool, len(p.NodeNames))
		for _, n := range p.NodeNames {
			part[n] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &pb.ListNodesResponse{}
	partsOf := c.partitionsByNode()
	for _, name := range c.st.names {
		if want != nil && !want[name] || part != nil && !part[name] {
			continue
		}
		n := c.st.nodes[name]
		p := c.nodeProtoIn(n, partsOf[name])
		if len(req.GetStates()) > 0 && !stateMatches(p, req.GetStates()) {
			continue
		}
		if req.GetSamples() {
			p.Samples = latestSamples(n)
		}
		out.Nodes = append(out.Nodes, p)
	}
	return out, nil
}

// latestSamples is the last telemetry sample of each of the node's GPUs,
// by UUID (c.mu held).
func latestSamples(n *node) []*pb.Sample {
	out := make([]*pb.Sample, 0, len(n.samples))
	for _, s := range n.samples {
		out = append(out, api.SampleToProto(s))
	}
	slices.SortFunc(out, func(a, b *pb.Sample) int { return strings.Compare(a.GetUuid(), b.GetUuid()) })
	return out
}

// stateMatches compares a node with state filters (sinfo -t): base
// states, flags or display states, case-insensitive; DRAIN matches both
// draining and drained.
func stateMatches(p *pb.Node, states []string) bool {
	for _, s := range states {
		s = strings.ToUpper(s)
		disp := strings.ToUpper(strings.TrimSuffix(p.GetDisplayState(), "*"))
		if s == p.GetState() || s == disp || slices.Contains(p.GetFlags(), s) || (s == "DRAIN" && (disp == "DRNG" || disp == "DRAIN")) {
			return true
		}
	}
	return false
}

func (s *nodesService) Get(ctx context.Context, req *pb.GetNodeRequest) (*pb.Node, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.st.nodes[req.GetName()]
	if n == nil {
		return nil, status.Errorf(codes.NotFound, "node %q not found", req.GetName())
	}
	p := c.nodeProto(n)
	if req.GetInventory() && n.Inventory != nil {
		p.Inventory = api.InventoryToProto(*n.Inventory)
	}
	return p, nil
}

// Update drains, resumes, undrains or downs nodes, drains and resumes
// single GPUs of one node, or re-partitions one GPU (operators and admins).
func (s *nodesService) Update(ctx context.Context, req *pb.UpdateNodeRequest) (*pb.UpdateNodeResponse, error) {
	c := s.c
	id := caller(ctx)
	if err := requireOperator(id, "scontrol update node"); err != nil {
		return nil, err
	}
	names, err := topology.ExpandHostlist(req.GetNodes())
	if err != nil || len(names) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "NodeName=%q: not a hostlist", req.GetNodes())
	}
	state := strings.ToUpper(req.GetState())
	switch state {
	case "DRAIN", "DOWN":
		if strings.TrimSpace(req.GetReason()) == "" {
			return nil, status.Error(codes.InvalidArgument, "You must specify a reason when DOWNING or DRAINING a node")
		}
	case "RESUME", "UNDRAIN", "IDLE":
	case "EXEMPT", "UNEXEMPT":
		if len(req.GetDevices()) == 0 {
			return nil, status.Errorf(codes.InvalidArgument, "State=%s: name the devices to exempt from health decisions", req.GetState())
		}
	case stateRepartition:
		if len(req.GetDevices()) != 1 {
			return nil, status.Errorf(codes.InvalidArgument, "State=PARTITION: name exactly one GPU (got %d devices)", len(req.GetDevices()))
		}
	default:
		return nil, status.Errorf(codes.InvalidArgument, "State=%s: must be DRAIN, DOWN, RESUME, UNDRAIN, EXEMPT, UNEXEMPT or PARTITION", req.GetState())
	}
	if len(req.GetPartitions()) > 0 && state != stateRepartition {
		return nil, status.Errorf(codes.InvalidArgument, "partitions=%s: only with State=PARTITION", strings.Join(req.GetPartitions(), ","))
	}
	if req.GetForce() && state != stateRepartition {
		return nil, status.Errorf(codes.InvalidArgument, "force: only with State=PARTITION (got State=%s)", req.GetState())
	}
	if len(req.GetDevices()) > 0 && len(names) != 1 {
		return nil, status.Errorf(codes.InvalidArgument, "devices=%s: per-GPU changes name exactly one node (got %d)", strings.Join(req.GetDevices(), ","), len(names))
	}
	out := &pb.UpdateNodeResponse{}
	err = c.mutate(ctx, func() ([]write, func(), error) {
		out.Nodes = nil
		var ws []write
		var afters []func()
		for _, name := range names {
			n := c.st.nodes[name]
			if n == nil {
				return nil, nil, status.Errorf(codes.NotFound, "node %q not found", name)
			}
		}
		for _, name := range names {
			n := c.st.nodes[name]
			update := c.updateNodeLocked
			if state == stateRepartition {
				update = func(n *node, _, _ string, devices []string, user string) ([]write, []func(), error) {
					return c.repartitionLocked(n, devices, req.GetPartitions(), req.GetForce(), user)
				}
			}
			w, a, err := update(n, state, req.GetReason(), req.GetDevices(), id.User)
			if err != nil {
				return nil, nil, err
			}
			ws = append(ws, w...)
			afters = append(afters, a...)
			out.Nodes = append(out.Nodes, c.nodeProto(n))
		}
		return ws, func() {
			for _, a := range afters {
				a()
			}
			c.trigger()
		}, nil
	})
	if err != nil {
		return nil, asStatus(err)
	}
	return out, nil
}

// updateNodeLocked applies one node's change as a command and returns
// its writes (the node's record, the decision-log record, the ends of a
// downed node's jobs) and what to do once they are committed.
func (c *Controller) updateNodeLocked(n *node, state, reason string, devices []string, user string) ([]write, []func(), error) {
	var cmd cstate.Command
	detail, fields := "", map[string]string(nil)
	if len(devices) > 0 {
		uuids, err := resolveDevices(n, devices)
		if err != nil {
			return nil, nil, err
		}
		fields = map[string]string{"devices": strings.Join(uuids, ",")}
		switch state {
		case "EXEMPT", "UNEXEMPT":
			if _, err := c.applyLocked(cstate.ExemptGPUs{Node: n.name, By: user, Devices: uuids, Clear: state == "UNEXEMPT"}); err != nil {
				return nil, nil, err
			}
			ev := &pb.Event{Kind: EventHealth, Node: n.name, Actor: user, Reason: reason, Verdict: "not exempt", Fields: fields}
			if state == "EXEMPT" {
				ev.Verdict = "exempt"
			}
			ws, err := c.nodeWrites(n, ev)
			return ws, nil, err
		case "DRAIN", "DOWN":
			cmd = cstate.DrainGPUs{Node: n.name, By: user, Reason: reason, Devices: uuids}
		default:
			cmd = cstate.DrainGPUs{Node: n.name, By: user, Reason: reason, Devices: uuids, Resume: true}
		}
	} else {
		ns := cstate.NodeState(state)
		if ns == "IDLE" {
			ns = cstate.NodeResume
		}
		cmd = cstate.SetNode{Node: n.name, By: user, Reason: reason, State: ns}
	}
	effects, err := c.applyLocked(cmd)
	if err != nil {
		return nil, nil, err
	}
	if d, ok := cmd.(cstate.DrainGPUs); ok && d.Resume {
		detail = c.adminResumeLocked(n, d.Devices, user, c.now())
	}
	var ws []write
	var afters []func()
	if s, ok := cmd.(cstate.SetNode); ok && s.State == cstate.NodeDown {
		ws, afters = c.failNodeJobsLocked(n, "node "+n.name+" set DOWN: "+reason)
	}
	var ev *pb.Event
	for _, e := range effects {
		if l, ok := e.(cstate.NodeLogged); ok {
			ev = &pb.Event{Kind: l.Kind, Node: l.Node, Actor: l.Actor, Reason: l.Reason, Detail: detail, Fields: fields}
		}
	}
	nw, err := c.nodeWrites(n, ev)
	if err != nil {
		return nil, nil, err
	}
	return append(ws, nw...), afters, nil
}

// nodeWrites is a node's record and, when ev is set, its decision-log
// record.
func (c *Controller) nodeWrites(n *node, ev *pb.Event) ([]write, error) {
	nw, err := n.write()
	if err != nil {
		return nil, err
	}
	ws := []write{nw}
	if ev != nil {
		ws = append(ws, c.record(ev)...)
	}
	return ws, nil
}

// resolveDevices maps UUIDs or local indices to the node's device UUIDs.
func resolveDevices(n *node, devices []string) ([]string, error) {
	if n.Inventory == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "node %s has not reported its devices yet", n.name)
	}
	var out []string
	for _, d := range devices {
		found := ""
		for _, dev := range n.Inventory.Devices {
			if dev.UUID == d || strconv.Itoa(dev.Index) == d && dev.Parent == "" {
				found = dev.UUID
				break
			}
		}
		if found == "" {
			return nil, status.Errorf(codes.InvalidArgument, "devices=%s: node %s has no device %q", strings.Join(devices, ","), n.name, d)
		}
		out = append(out, found)
	}
	return out, nil
}
