package rest

import (
	"encoding/json"
	"fmt"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// resvModReq is v0.0.44_reservation_mod_req.
type resvModReq struct {
	Reservations []json.RawMessage `json:"reservations"`
}

// resvChange is one reservation of a POST reservations/: its spec and,
// when it names a reservation that exists, the fields to update.
type resvChange struct {
	spec   *pb.ReservationSpec
	update []string
}

// updateFields maps the description's properties to the fields
// Reservations.Update changes.
var updateFields = []struct{ prop, field string }{
	{"start_time", "start_time"}, {"end_time", "end_time"}, {"duration", "duration"}, {"node_list", "nodes"},
	{"node_count", "tres"}, {"tres", "tres"}, {"users", "users"}, {"accounts", "accounts"}, {"flags", "flags"},
	{"partition", "partition"},
}

// serveReservationsMod is POST reservations/, "create or update
// reservations": each description names a reservation; one that exists is
// updated in the properties given (scontrol update reservation), a new
// one is created (scontrol create reservation), both through the CLI's
// Reservations service (operators and admins). Every description is
// decoded and checked before any is applied; a refusal stops there and
// names the reservations already applied.
func serveReservationsMod(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	var req resvModReq
	if err := decodeObject(c, body, "reservation_mod_req", setOf("reservations"), &req, true); err != nil {
		return nil, err
	}
	if len(req.Reservations) == 0 {
		return nil, status.Error(codes.InvalidArgument, "reservation_mod_req.reservations: give at least one reservation")
	}
	exists := func(name string) (bool, error) {
		_, err := h.b.Reservations.Get(c.ctx, &pb.GetReservationRequest{Name: name})
		if status.Code(err) == codes.NotFound {
			return false, nil
		}
		return err == nil, err
	}
	changes := make([]resvChange, len(req.Reservations))
	for i, raw := range req.Reservations {
		if changes[i], err = resvChangeOf(c, fmt.Sprintf("reservation_mod_req.reservations[%d]", i), raw, exists); err != nil {
			return nil, err
		}
	}
	out := &resvModResp{Reservations: []*resvDescOut{}}
	for _, ch := range changes {
		var r *pb.Reservation
		if ch.update != nil {
			r, err = h.b.Reservations.Update(c.ctx, &pb.UpdateReservationRequest{Spec: ch.spec, Fields: ch.update})
		} else {
			r, err = h.b.Reservations.Create(c.ctx, ch.spec)
		}
		if err != nil {
			return nil, appliedBefore(err, out.Reservations)
		}
		out.Reservations = append(out.Reservations, descOut(r))
	}
	return out, nil
}

// resvChangeOf decodes one description of a POST reservations/: a
// reservation exists says (the service's Get) is updated, another created.
func resvChangeOf(c *call, where string, raw json.RawMessage, exists func(name string) (bool, error)) (resvChange, error) {
	var d resvDesc
	if err := decodeObject(c, raw, where, resvDescProps(), &d, true); err != nil {
		return resvChange{}, err
	}
	if deref(d.Name) == "" {
		return resvChange{}, status.Errorf(codes.InvalidArgument, "%s.name: required (the reservation to create or update)", where)
	}
	found, err := exists(*d.Name)
	if err != nil {
		return resvChange{}, err
	}
	if !found {
		spec, err := d.spec()
		return resvChange{spec: spec}, at(where, err)
	}
	var props map[string]json.RawMessage
	json.Unmarshal(raw, &props) // decoded just above
	ch := resvChange{update: []string{}}
	for _, f := range updateFields {
		if _, ok := props[f.prop]; ok && !slices.Contains(ch.update, f.field) {
			ch.update = append(ch.update, f.field)
		}
	}
	if len(ch.update) == 0 {
		return resvChange{}, status.Errorf(codes.InvalidArgument, "%s: reservation %q exists and nothing to change is given", where, *d.Name)
	}
	ch.spec, err = d.fields()
	return ch, at(where, err)
}

// at names the list entry a description's error is in.
func at(where string, err error) error {
	if err == nil {
		return nil
	}
	st := status.Convert(err)
	return status.Errorf(st.Code(), "%s: %s", where, st.Message())
}

// appliedBefore adds to a refusal the reservations already applied, so
// the client knows what the request changed before it stopped.
func appliedBefore(err error, done []*resvDescOut) error {
	if len(done) == 0 {
		return err
	}
	names := make([]string, len(done))
	for i, d := range done {
		names[i] = d.Name
	}
	st := status.Convert(err)
	return status.Errorf(st.Code(), "%s (applied before it: %q)", st.Message(), names)
}
