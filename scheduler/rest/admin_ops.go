package rest

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// serveReconfigure is scontrol reconfigure over Cluster.Reconfigure
// (admins only, there as for the CLI). The answer's schema is the bare
// envelope, so what was applied and what waits for a restart come back as
// warnings: a client that reads only the status still sees success.
func serveReconfigure(h *Handler, c *call) (any, error) {
	r, err := h.b.Cluster.Reconfigure(c.ctx, &pb.ReconfigureRequest{})
	if err != nil {
		return nil, err
	}
	for _, a := range r.GetApplied() {
		c.warn("reconfigure", "applied: %s", a)
	}
	for _, s := range r.GetRestart() {
		c.warn("reconfigure", "%s: differs in the cluster file and takes effect only when the controller restarts", s)
	}
	return &envelope{}, nil
}

// nodesUpdate is the part of v0.0.44_update_node_msg POST nodes/ honours:
// the nodes to change are named in the body (a hostlist) rather than the path.
type nodesUpdate struct {
	Name   []string `json:"name"`
	State  []string `json:"state"`
	Reason *string  `json:"reason"`
}

// serveNodesUpdate is scontrol update NodeName=LIST State=...: one
// Nodes.Update over the whole list, so the controller checks every node
// before it changes any (operators and admins, as for the CLI).
func serveNodesUpdate(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	req, err := decodeNodesUpdate(c, body)
	if err != nil {
		return nil, err
	}
	if _, err := h.b.Nodes.Update(c.ctx, req); err != nil {
		return nil, err
	}
	return &envelope{}, nil
}

// decodeNodesUpdate reads POST nodes/'s update_node_msg into the one
// Nodes.Update it asks for.
func decodeNodesUpdate(c *call, body []byte) (*pb.UpdateNodeRequest, error) {
	var u nodesUpdate
	if err := decodeObject(c, body, "update_node_msg", updateNodeProps(), &u, true); err != nil {
		return nil, err
	}
	if len(u.Name) == 0 {
		return nil, status.Error(codes.InvalidArgument, "update_node_msg.name: name the nodes to change (a hostlist such as [\"n[1-4]\"])")
	}
	if len(u.State) != 1 || strings.TrimSpace(u.State[0]) == "" {
		return nil, status.Errorf(codes.InvalidArgument, "update_node_msg.state=%q: give exactly one state (DRAIN, DOWN, RESUME, UNDRAIN, IDLE)", u.State)
	}
	for i, n := range u.Name {
		if strings.TrimSpace(n) == "" {
			return nil, status.Errorf(codes.InvalidArgument, "update_node_msg.name[%d]: empty (give a node or a hostlist such as n[1-4])", i)
		}
	}
	return &pb.UpdateNodeRequest{Nodes: strings.Join(u.Name, ","), State: u.State[0], Reason: deref(u.Reason)}, nil
}
