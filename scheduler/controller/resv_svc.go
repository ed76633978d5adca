package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
)

type reservationsService struct {
	pb.UnimplementedReservationsServer
	c *Controller
}

// Create places and stores a reservation (operators and admins). A
// missing name becomes <first user or account>_<n>, as in Slurm.
func (s *reservationsService) Create(ctx context.Context, spec *pb.ReservationSpec) (*pb.Reservation, error) {
	c := s.c
	id := caller(ctx)
	if err := requireOperator(id, "scontrol create reservation"); err != nil {
		return nil, err
	}
	var out *pb.Reservation
	err := c.mutate(ctx, func() ([]write, func(), error) {
		now := c.now()
		in, err := c.createInputLocked(spec)
		if err != nil {
			return nil, nil, err
		}
		if in.name == "" {
			in.name = c.resvNameLocked(in)
		}
		if err := checkResvName(in.name); err != nil {
			return nil, nil, err
		}
		if c.st.resv[in.name] != nil {
			return nil, nil, status.Errorf(codes.AlreadyExists, "ReservationName=%s: reservation already exists", in.name)
		}
		cr, err := c.placeLocked(in, nil, false, now)
		if err != nil {
			return nil, nil, err
		}
		r := &reservation{core: cr, tres: in.tresText, partition: in.partition, createdBy: id.User, created: now}
		return c.storeResvLocked(r, id.User, "create", now, &out)
	})
	if err != nil {
		return nil, asStatus(err)
	}
	return out, nil
}

// Update changes the named fields and checks the result as a new
// reservation would be; a TRES reservation is placed again when what it
// holds or when it holds it changed.
func (s *reservationsService) Update(ctx context.Context, req *pb.UpdateReservationRequest) (*pb.Reservation, error) {
	c := s.c
	id := caller(ctx)
	if err := requireOperator(id, "scontrol update reservation"); err != nil {
		return nil, err
	}
	spec := req.GetSpec()
	if len(req.GetFields()) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "ReservationName=%s: nothing to update", spec.GetName())
	}
	fields := slices.Clone(req.GetFields())
	// start_time first, so a Duration given with it counts from the new start.
	slices.SortStableFunc(fields, func(a, b string) int { return boolCmp(b == "start_time", a == "start_time") })
	if slices.Contains(fields, "nodes") && slices.Contains(fields, "tres") {
		return nil, status.Errorf(codes.InvalidArgument, "Nodes=%s and TRES=%s: give one of them, not both", spec.GetNodes(), spec.GetTres())
	}
	var out *pb.Reservation
	err := c.mutate(ctx, func() ([]write, func(), error) {
		now := c.now()
		prev := c.st.resv[spec.GetName()]
		if prev == nil {
			return nil, nil, status.Errorf(codes.NotFound, "ReservationName=%s: reservation not found", spec.GetName())
		}
		in := prev.inputOf()
		keep := true
		for _, f := range fields {
			if err := c.applyResvField(&in, f, spec); err != nil {
				return nil, nil, err
			}
			switch f {
			case "start_time", "end_time", "duration", "tres", "partition", "nodes":
				keep = false
			}
		}
		cr, err := c.placeLocked(in, prev, keep, now)
		if err != nil {
			return nil, nil, err
		}
		r := &reservation{core: cr, tres: in.tresText, partition: in.partition, createdBy: prev.createdBy, created: prev.created}
		return c.storeResvLocked(r, id.User, "update", now, &out)
	})
	if err != nil {
		return nil, asStatus(err)
	}
	return out, nil
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// storeResvLocked keeps r in memory and returns its writes and an event.
func (c *Controller) storeResvLocked(r *reservation, user, action string, now time.Time, out **pb.Reservation) ([]write, func(), error) {
	w, err := r.write()
	if err != nil {
		return nil, nil, err
	}
	c.st.resv[r.core.Name] = r
	*out = c.resvProto(r, now)
	ev := &pb.Event{Kind: EventReservation, Actor: user, Reason: action, Nodes: r.core.Nodes,
		Detail: fmt.Sprintf("reservation %s %sd: %s", r.core.Name, action, describeResv(r)),
		Fields: map[string]string{"reservation": r.core.Name, "action": action}}
	return append([]write{w}, c.record(ev)...), c.trigger, nil
}

func describeResv(r *reservation) string {
	what := "nodes " + strings.Join(r.core.Nodes, ",")
	if r.tres != "" {
		what = "TRES " + r.tres
	}
	end := "no end"
	if !r.core.End.IsZero() {
		end = "until " + r.core.End.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s from %s %s", what, r.core.Start.UTC().Format(time.RFC3339), end)
}

// Delete removes a reservation no running job uses; pending jobs that name
// it stay pending (the core says the reservation does not exist).
func (s *reservationsService) Delete(ctx context.Context, req *pb.DeleteReservationRequest) (*pb.DeleteReservationResponse, error) {
	c := s.c
	id := caller(ctx)
	if err := requireOperator(id, "scontrol delete reservation"); err != nil {
		return nil, err
	}
	name := req.GetName()
	err := c.mutate(ctx, func() ([]write, func(), error) {
		if c.st.resv[name] == nil {
			return nil, nil, status.Errorf(codes.NotFound, "ReservationName=%s: reservation not found", name)
		}
		for _, j := range c.st.m.Active() {
			if j.live() && j.Core.Reservation == name {
				return nil, nil, status.Errorf(codes.FailedPrecondition, "ReservationName=%s: reservation busy: job %d runs in it", name, j.Core.ID)
			}
		}
		delete(c.st.resv, name)
		ws := []write{{bucket: bucketReservations, key: []byte(name)}}
		ws = append(ws, c.record(&pb.Event{Kind: EventReservation, Actor: id.User, Reason: "delete", Detail: "reservation " + name + " deleted",
			Fields: map[string]string{"reservation": name, "action": "delete"}})...)
		return ws, c.trigger, nil
	})
	if err != nil {
		return nil, asStatus(err)
	}
	return &pb.DeleteReservationResponse{}, nil
}

func (s *reservationsService) List(ctx context.Context, _ *pb.ListReservationsRequest) (*pb.ListReservationsResponse, error) {
	c := s.c
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &pb.ListReservationsResponse{}
	for _, name := range sortedKeys(c.st.resv) {
		out.Reservations = append(out.Reservations, c.resvProto(c.st.resv[name], now))
	}
	return out, nil
}

func (s *reservationsService) Get(ctx context.Context, req *pb.GetReservationRequest) (*pb.Reservation, error) {
	c := s.c
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.st.resv[req.GetName()]
	if r == nil {
		return nil, status.Errorf(codes.NotFound, "ReservationName=%s: reservation not found", req.GetName())
	}
	return c.resvProto(r, now), nil
}

// resvNameLocked generates <first user or account>_<n>.
func (c *Controller) resvNameLocked(in resvInput) string {
	base := "resv"
	if len(in.users) > 0 {
		base = in.users[0]
	} else if len(in.accounts) > 0 {
		base = in.accounts[0]
	}
	for n := 1; ; n++ {
		if name := fmt.Sprintf("%s_%d", base, n); c.st.resv[name] == nil {
			return name
		}
	}
}

// checkResvName refuses names the CLI could not give back (spaces,
// commas, '=').
func checkResvName(name string) error {
	if name == "" || strings.ContainsAny(name, " \t\n,=") {
		return status.Errorf(codes.InvalidArgument, "ReservationName=%q: a name without spaces, commas or '=' is required", name)
	}
	return nil
}

// checkJobReservationLocked refuses a submission naming a reservation that
// does not exist or does not admit its user or account, as sbatch does.
func (c *Controller) checkJobReservationLocked(j *core.Job) error {
	if j.Reservation == "" {
		return nil
	}
	r := c.st.resv[j.Reservation]
	if r == nil {
		return status.Errorf(codes.InvalidArgument, "reservation=%s: Requested reservation is invalid (no such reservation)", j.Reservation)
	}
	if len(r.core.Users)+len(r.core.Accounts) > 0 && !slices.Contains(r.core.Users, j.User) && !slices.Contains(r.core.Accounts, j.Account) {
		return status.Errorf(codes.PermissionDenied, "reservation=%s: Access denied to requested reservation (user %s, account %s)", j.Reservation, j.User, j.Account)
	}
	return nil
}
