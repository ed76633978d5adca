package rest

import (
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

type reservationsResp struct {
	Reservations []*reservationInfo `json:"reservations"`
	LastUpdate   *noVal             `json:"last_update"`
	envelope
}

// reservationInfo is v0.0.44_reservation_info.
type reservationInfo struct {
	Name      string   `json:"name"`
	Accounts  string   `json:"accounts"`
	Users     string   `json:"users"`
	NodeList  string   `json:"node_list"`
	NodeCount int32    `json:"node_count"`
	CoreCount int32    `json:"core_count"`
	Partition string   `json:"partition"`
	StartTime *noVal   `json:"start_time"`
	EndTime   *noVal   `json:"end_time"`
	Flags     []string `json:"flags"`
	Tres      string   `json:"tres"`
}

type licensesResp struct {
	Licenses   []struct{} `json:"licenses"`
	LastUpdate *noVal     `json:"last_update"`
	envelope
}

func serveReservations(h *Handler, c *call) (any, error) {
	if _, err := updateTime(c); err != nil {
		return nil, err
	}
	list, err := h.b.Reservations.List(c.ctx, &pb.ListReservationsRequest{})
	if err != nil {
		return nil, err
	}
	return h.reservationsAnswer(list.GetReservations()), nil
}

func serveReservation(h *Handler, c *call) (any, error) {
	if _, err := updateTime(c); err != nil {
		return nil, err
	}
	r, err := h.b.Reservations.Get(c.ctx, &pb.GetReservationRequest{Name: c.r.PathValue("reservation_name")})
	if err != nil {
		return nil, err
	}
	return h.reservationsAnswer([]*pb.Reservation{r}), nil
}

func serveReservationDelete(h *Handler, c *call) (any, error) {
	if _, err := h.b.Reservations.Delete(c.ctx, &pb.DeleteReservationRequest{Name: c.r.PathValue("reservation_name")}); err != nil {
		return nil, err
	}
	return &envelope{}, nil
}

func (h *Handler) reservationsAnswer(rs []*pb.Reservation) *reservationsResp {
	out := &reservationsResp{Reservations: make([]*reservationInfo, 0, len(rs)), LastUpdate: num(h.b.Now().Unix())}
	for _, r := range rs {
		out.Reservations = append(out.Reservations, toReservation(r))
	}
	return out
}

// toReservation maps a Parity reservation to v0.0.44_reservation_info.
// A reservation of a TRES amount holds parts of nodes: its node list is
// those nodes, and its core count the CPUs it holds on them.
func toReservation(r *pb.Reservation) *reservationInfo {
	nodes := slices.Clone(r.GetNodes())
	var cores int32
	for _, s := range r.GetSlices() {
		if !slices.Contains(nodes, s.GetNode()) {
			nodes = append(nodes, s.GetNode())
		}
		cores += s.GetCpus()
	}
	ri := &reservationInfo{Name: r.GetName(), Accounts: strings.Join(r.GetAccounts(), ","), Users: strings.Join(r.GetUsers(), ","),
		NodeList: jobspec.CompressHostlist(nodes), NodeCount: int32(len(nodes)), CoreCount: cores, Partition: r.GetPartition(),
		StartTime: epoch(r.GetStartTime()), EndTime: infinite(), Flags: []string{}, Tres: r.GetTres()}
	if r.GetEndTime() != nil {
		ri.EndTime = epoch(r.GetEndTime())
	}
	for _, f := range r.GetFlags() {
		if f = strings.ToUpper(strings.TrimSpace(f)); resvFlagOK(f) {
			ri.Flags = append(ri.Flags, f)
		}
	}
	return ri
}

// resvFlagOK: the flags Parity keeps that the document's enum names.
func resvFlagOK(f string) bool {
	switch f {
	case "MAINT", "IGNORE_JOBS", "OVERLAP", "FLEX", "MAGNETIC", "STATIC", "ANY_NODES", "PART_NODES", "DAILY", "WEEKLY":
		return true
	}
	return false
}

// serveLicenses answers the cluster's licenses: Parity keeps none (no
// Licenses= in its configuration), so the list is empty, as slurmctld's
// is on a cluster that configures none.
func serveLicenses(h *Handler, _ *call) (any, error) {
	return &licensesResp{Licenses: []struct{}{}, LastUpdate: num(h.b.Now().Unix())}, nil
}

// serveNodeDelete refuses DELETE node/{name}: Parity's nodes come from the
// cluster file (there is no dynamic node to remove), so the node is
// looked up and the refusal says where to remove it.
func serveNodeDelete(h *Handler, c *call) (any, error) {
	if !c.id.Admin() { // slurmctld asks a super user, as Parity's own admin verbs do
		return nil, status.Errorf(codes.PermissionDenied, "access/permission denied: deleting a node needs an admin (you are %s %q)", c.id.Role, c.id.User)
	}
	name := c.r.PathValue("node_name")
	if _, err := h.b.Nodes.Get(c.ctx, &pb.GetNodeRequest{Name: name}); err != nil {
		return nil, err
	}
	return nil, status.Errorf(codes.FailedPrecondition,
		"node %q is configured in the cluster file: Parity has no dynamic nodes to delete; remove it from the file and restart the controller, or drain it (POST state DRAIN)", name)
}
