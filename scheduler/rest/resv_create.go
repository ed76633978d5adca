package rest

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// resvDesc is the part of v0.0.44_reservation_desc_msg Parity honours.
type resvDesc struct {
	Name      *string  `json:"name"`
	StartTime *noValIn `json:"start_time"`
	EndTime   *noValIn `json:"end_time"`
	Duration  *noValIn `json:"duration"` // minutes
	NodeList  []string `json:"node_list"`
	NodeCount *noValIn `json:"node_count"`
	Tres      []tresIn `json:"tres"`
	Users     []string `json:"users"`
	Accounts  []string `json:"accounts"`
	Flags     []string `json:"flags"`
	Partition *string  `json:"partition"`
}

// tresIn is v0.0.44_tres as a request gives it.
type tresIn struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// resvDescOut is the created reservation, as v0.0.44_reservation_desc_msg.
type resvDescOut struct {
	Name      string   `json:"name"`
	StartTime *noVal   `json:"start_time"`
	EndTime   *noVal   `json:"end_time"`
	NodeList  []string `json:"node_list"`
	Users     []string `json:"users"`
	Accounts  []string `json:"accounts"`
	Flags     []string `json:"flags"`
	Partition string   `json:"partition"`
}

type resvModResp struct {
	Reservations []*resvDescOut `json:"reservations"`
	envelope
}

func resvDescProps() map[string]bool {
	return setOf("accounts", "burst_buffer", "comment", "core_count", "duration", "end_time", "features", "flags", "groups",
		"licenses", "max_start_delay", "name", "node_count", "node_list", "partition", "purge_completed", "start_time", "tres", "users")
}

// serveReservationCreate is scontrol create reservation: the request is
// decoded strictly (a property Parity cannot honour is refused, so no
// reservation is made other than the one asked for) and Reservations.Create
// checks and places it (operators and admins only).
func serveReservationCreate(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	var d resvDesc
	if err := decodeObject(c, body, "reservation_desc_msg", resvDescProps(), &d, true); err != nil {
		return nil, err
	}
	spec, err := d.spec()
	if err != nil {
		return nil, err
	}
	r, err := h.b.Reservations.Create(c.ctx, spec)
	if err != nil {
		return nil, err
	}
	return &resvModResp{Reservations: []*resvDescOut{descOut(r)}}, nil
}

func descOut(r *pb.Reservation) *resvDescOut {
	ri := toReservation(r)
	return &resvDescOut{Name: r.GetName(), StartTime: ri.StartTime, EndTime: ri.EndTime, NodeList: orEmpty(r.GetNodes()),
		Users: orEmpty(r.GetUsers()), Accounts: orEmpty(r.GetAccounts()), Flags: ri.Flags, Partition: r.GetPartition()}
}

// spec turns the description into the ReservationSpec Create checks.
func (d *resvDesc) spec() (*pb.ReservationSpec, error) {
	if d.StartTime == nil || !d.StartTime.Set || d.StartTime.Number <= 0 {
		return nil, status.Error(codes.InvalidArgument, "reservation_desc_msg.start_time: give the start as a UNIX time")
	}
	return d.fields()
}

// fields is the spec of what the description gives, start time optional
// (an update changes only what is given).
func (d *resvDesc) fields() (*pb.ReservationSpec, error) {
	s := &pb.ReservationSpec{Name: deref(d.Name), Nodes: strings.Join(d.NodeList, ","), Users: d.Users, Accounts: d.Accounts,
		Flags: d.Flags, Partition: deref(d.Partition)}
	if d.StartTime != nil && d.StartTime.Set {
		s.StartTime = api.Timestamp(time.Unix(d.StartTime.Number, 0))
	}
	if d.EndTime != nil && d.EndTime.Set {
		s.EndTime = api.Timestamp(time.Unix(d.EndTime.Number, 0))
	}
	switch {
	case d.Duration == nil:
	case d.Duration.Infinite:
		s.DurationSeconds = -1
	case d.Duration.Set:
		if d.Duration.Number <= 0 {
			return nil, status.Errorf(codes.InvalidArgument, "reservation_desc_msg.duration=%d: want a positive number of minutes", d.Duration.Number)
		}
		s.DurationSeconds = d.Duration.Number * 60
	}
	var tres []string
	if d.NodeCount != nil && d.NodeCount.Set {
		tres = append(tres, fmt.Sprintf("node=%d", d.NodeCount.Number))
	}
	for i, t := range d.Tres {
		name := t.Type
		if t.Name != "" {
			name += "/" + t.Name
		}
		if t.Type == "" || t.Count <= 0 {
			return nil, status.Errorf(codes.InvalidArgument, "reservation_desc_msg.tres[%d]: want a type and a positive count, got %q=%d", i, name, t.Count)
		}
		tres = append(tres, fmt.Sprintf("%s=%d", name, t.Count))
	}
	s.Tres = strings.Join(tres, ",")
	return s, nil
}
