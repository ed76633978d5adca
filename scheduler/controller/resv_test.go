package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// resvSpec reserves nodes for users from start for dur (0: no end).
func (h *harness) resvSpec(name, nodes string, start, dur time.Duration, users ...string) *pb.ReservationSpec {
	s := &pb.ReservationSpec{Name: name, StartTime: api.Timestamp(h.clock.Now().Add(start)), Nodes: nodes, Users: users}
	if dur > 0 {
		s.DurationSeconds = int64(dur / time.Second)
	}
	return s
}

func (h *harness) createResv(spec *pb.ReservationSpec) *pb.Reservation {
	h.t.Helper()
	r, err := h.as("olga", auth.RoleOperator).CreateReservation(context.Background(), spec)
	if err != nil {
		h.t.Fatalf("create reservation %s: %v", spec.GetName(), err)
	}
	return r
}

func TestReservationCreateRefusals(t *testing.T) {
	h := startController(t, testCluster)
	h.register("n1", 4)
	h.register("n2", 4)
	ok := h.resvSpec("ok", "n1", time.Hour, time.Hour, "alice")
	tests := []struct {
		name  string
		user  string
		role  auth.Role
		edit  func(s *pb.ReservationSpec)
		code  codes.Code
		words []string // the message names the key and the value
	}{
		{"a user may not create", "alice", auth.RoleUser, func(*pb.ReservationSpec) {}, codes.PermissionDenied, []string{"operator"}},
		{"unknown node", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.Nodes = "n[1-9]" }, codes.InvalidArgument, []string{"Nodes=n[1-9]", `"n3"`}},
		{"bad hostlist", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.Nodes = "n[1-" }, codes.InvalidArgument, []string{"Nodes=n[1-"}},
		{"unknown flag", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.Flags = []string{"MAINT", "FLEX"} }, codes.InvalidArgument, []string{"Flags=", "FLEX"}},
		{"unknown account", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.Accounts = []string{"chem"} }, codes.InvalidArgument, []string{"Accounts=chem"}},
		{"unknown partition", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.Nodes, s.Tres, s.Partition = "", "gres/gpu=2", "big" }, codes.InvalidArgument, []string{"PartitionName=big"}},
		{"bad TRES", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.Nodes, s.Tres = "", "gres/gpu=two" }, codes.InvalidArgument, []string{"TRES=gres/gpu=two"}},
		{"nodes and TRES", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.Tres = "cpu=4" }, codes.InvalidArgument, []string{"Nodes=n1", "TRES=cpu=4"}},
		{"nothing reserved", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.Nodes = "" }, codes.InvalidArgument, []string{"Nodes= or TRES="}},
		{"no access list", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.Users = nil }, codes.InvalidArgument, []string{"Users= or Accounts="}},
		{"no start", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.StartTime = nil }, codes.InvalidArgument, []string{"StartTime"}},
		{"end before start", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) {
			s.DurationSeconds, s.EndTime = 0, api.Timestamp(h.clock.Now())
		}, codes.InvalidArgument, []string{"EndTime"}},
		{"bad name", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.Name = "a b" }, codes.InvalidArgument, []string{"ReservationName="}},
		{"more GPUs than exist", "olga", auth.RoleOperator, func(s *pb.ReservationSpec) { s.Nodes, s.Tres = "", "gres/gpu=9" }, codes.InvalidArgument, []string{"gres/gpu=9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := proto.Clone(ok).(*pb.ReservationSpec)
			tt.edit(spec)
			_, err := h.as(tt.user, tt.role).CreateReservation(context.Background(), spec)
			if status.Code(err) != tt.code {
				t.Fatalf("code %v, want %v (%v)", status.Code(err), tt.code, err)
			}
			for _, w := range tt.words {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not name %q", err, w)
				}
			}
		})
	}
	h.createResv(ok)
	if _, err := h.as("root", auth.RoleAdmin).CreateReservation(context.Background(), ok); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("duplicate name: %v", err)
	}
	// Overlapping non-MAINT reservations on the same node are refused.
	if _, err := h.as("root", auth.RoleAdmin).CreateReservation(context.Background(), h.resvSpec("other", "n1", 90*time.Minute, time.Hour, "bob")); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "overlaps reservation ok") {
		t.Fatalf("overlap: %v", err)
	}
}

func TestReservationConfinesJobs(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	h.register("n2", 4)
	h.createResv(h.resvSpec("train", "n1", time.Hour, 2*time.Hour, "alice"))
	alice, bob := h.as("alice", auth.RoleUser), h.as("bob", auth.RoleUser)

	inside := gpuJob("inside", 4)
	inside.Reservation = "train"
	in := h.submit(alice, inside)
	// bob is not a member: sbatch refuses the reservation.
	denied := gpuJob("denied", 1)
	denied.Reservation = "train"
	if _, err := bob.Submit(ctx, denied); status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "reservation=train") {
		t.Fatalf("non-member submit: %v", err)
	}
	denied.Reservation = "nope"
	if _, err := alice.Submit(ctx, denied); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "reservation=nope") {
		t.Fatalf("unknown reservation: %v", err)
	}
	// bob's 2-hour job asks for n1: it would run into the reservation.
	long := gpuJob("long", 4)
	long.Nodelist, long.TimeLimitSeconds = []string{"n1"}, 7200
	out := h.submit(bob, long)
	h.pass()
	j := h.job(in)
	if j.GetState() != StatePending || j.GetReason() != "Reservation" || !strings.Contains(j.GetReasonDetail(), "train") {
		t.Fatalf("job in a future reservation: %s %s (%s)", j.GetState(), j.GetReason(), j.GetReasonDetail())
	}
	o := h.job(out)
	if o.GetState() != StatePending || (o.GetReason() != "ReqNodeNotAvail" && o.GetReason() != "Reservation" && o.GetReason() != "Resources") {
		t.Fatalf("non-member job on reserved node: %s %s (%s)", o.GetState(), o.GetReason(), o.GetReasonDetail())
	}
	ex, err := bob.ExplainJob(ctx, out, false)
	if err != nil || !strings.Contains(ex.GetText(), "admin reservation train holds n1") {
		t.Fatalf("explain does not name the reservation: %v\n%s", err, ex.GetText())
	}

	h.clock.Advance(time.Hour)
	h.register("n1", 4) // heartbeats, as the agents would have sent
	h.register("n2", 4)
	h.pass()
	j = h.job(in)
	if j.GetState() != StateRunning || !slices.Equal(nodesOf(j), []string{"n1"}) {
		t.Fatalf("job inside its reservation: %s on %v (%s %s)", j.GetState(), nodesOf(j), j.GetReason(), j.GetReasonDetail())
	}
	if err := h.as("root", auth.RoleAdmin).DeleteReservation(ctx, "train"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("delete with a running job: %v", err)
	}
}

func TestMaintReservationBlocksOverlappingJobs(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	h.register("n2", 4)
	m := h.resvSpec("maint", "n[1-2]", 30*time.Minute, time.Hour, "root")
	m.Flags = []string{"MAINT"}
	h.createResv(m)
	alice := h.as("alice", auth.RoleUser)
	long := gpuJob("long", 1)
	long.TimeLimitSeconds = 3600
	short := gpuJob("short", 1)
	short.TimeLimitSeconds = 600
	l, s := h.submit(alice, long), h.submit(alice, short)
	h.pass()
	if st := h.job(s).GetState(); st != StateRunning {
		t.Fatalf("a job ending before the maintenance is %s", st)
	}
	if j := h.job(l); j.GetState() != StatePending {
		t.Fatalf("a job overlapping the maintenance is %s", j.GetState())
	}
	ex, err := alice.ExplainJob(ctx, l, false)
	if err != nil || !strings.Contains(ex.GetText(), "maintenance reservation maint") {
		t.Fatalf("explain does not name the maintenance: %v\n%s", err, ex.GetText())
	}
}

func TestReservationUpdateDeleteAndRestart(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	h.register("n2", 4)
	olga := h.as("olga", auth.RoleOperator)
	gpus := &pb.ReservationSpec{StartTime: api.Timestamp(h.clock.Now().Add(time.Hour)), DurationSeconds: 3600, Tres: "gres/gpu=2", Accounts: []string{"physics"}}
	r, err := olga.CreateReservation(ctx, gpus)
	if err != nil {
		t.Fatal(err)
	}
	if r.GetName() != "physics_1" || len(r.GetSlices()) != 1 || len(r.GetSlices()[0].GetDevices()) != 2 || r.GetState() != "INACTIVE" {
		t.Fatalf("TRES reservation: %v", r)
	}
	h.createResv(h.resvSpec("gone", "n2", 3*time.Hour, time.Hour, "bob"))

	if _, err := h.as("alice", auth.RoleUser).UpdateReservation(ctx, &pb.ReservationSpec{Name: "gone"}, []string{"users"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("user update: %v", err)
	}
	upd := &pb.ReservationSpec{Name: "physics_1", DurationSeconds: 7200, Users: []string{"carol"}}
	if r, err = olga.UpdateReservation(ctx, upd, []string{"duration", "users"}); err != nil {
		t.Fatal(err)
	}
	if got := api.Time(r.GetEndTime()).Sub(api.Time(r.GetStartTime())); got != 2*time.Hour || !slices.Equal(r.GetUsers(), []string{"carol"}) {
		t.Fatalf("after update: %v", r)
	}
	if _, err := olga.UpdateReservation(ctx, &pb.ReservationSpec{Name: "physics_1", Nodes: "n7"}, []string{"nodes"}); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "Nodes=n7") {
		t.Fatalf("update to an unknown node: %v", err)
	}
	if _, err := olga.UpdateReservation(ctx, &pb.ReservationSpec{Name: "nope"}, []string{"users"}); status.Code(err) != codes.NotFound {
		t.Fatalf("update of a missing reservation: %v", err)
	}
	if err := olga.DeleteReservation(ctx, "gone"); err != nil {
		t.Fatal(err)
	}

	h.restart()
	h.register("n1", 4)
	h.register("n2", 4)
	list, err := h.as("alice", auth.RoleUser).ListReservations(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("after restart: %v, %v", list, err)
	}
	got := list[0]
	if got.GetName() != "physics_1" || got.GetTres() != "gres/gpu=2" || !slices.Equal(got.GetUsers(), []string{"carol"}) ||
		!slices.Equal(got.GetSlices()[0].GetDevices(), r.GetSlices()[0].GetDevices()) || api.Time(got.GetEndTime()) != api.Time(r.GetEndTime()) {
		t.Fatalf("reservation after restart:\n got %v\nwant %v", got, r)
	}
	// The restarted controller feeds it to the core: carol's job waits for it.
	job := gpuJob("c", 2)
	job.Reservation, job.Account = "physics_1", "bio"
	id := h.submit(h.as("carol", auth.RoleUser), job)
	h.pass()
	if j := h.job(id); j.GetReason() != "Reservation" {
		t.Fatalf("job in the restored reservation: %s %s", j.GetState(), j.GetReason())
	}
	// Past its end it is deleted.
	h.clock.Advance(4 * time.Hour)
	if err := h.c.maintain(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.as("olga", auth.RoleOperator).GetReservation(ctx, "physics_1"); status.Code(err) != codes.NotFound {
		t.Fatalf("ended reservation: %v", err)
	}
}

func nodesOf(j *pb.Job) []string {
	var out []string
	for _, a := range j.GetAlloc() {
		out = append(out, a.GetNode())
	}
	return out
}
