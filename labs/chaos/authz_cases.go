package chaos

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// target is what one cell acts on.
type target struct {
	job  uint64
	name string // unique: a submission's job name, a reservation's name
}

// action is a row of the matrix: what to do, over which paths, and what
// each identity should get.
type action struct {
	name  string
	paths []path
	who   map[string]want
	// setup makes the cell's target (another user's job, the caller's own).
	setup func(context.Context, *cell) (*target, error)
	grpc  func(context.Context, *client.Client, *target) error
	cli   func(*target) []string
	body  func(*target) []byte // HTTP: the submission
	// effect reports (as an admin) whether the action took effect; nil
	// for reads. undo puts things back for the next cell.
	effect func(context.Context, *lab, *target) (bool, error)
	undo   func(context.Context, *lab, *target)
}

// whoOrder is the action's identities in the matrix's order.
func (a action) whoOrder() []string {
	var out []string
	for _, w := range []string{"user", "operator", "admin", "anonymous", "garbage", "expired", "agent"} {
		if _, ok := a.who[w]; ok {
			out = append(out, w)
		}
	}
	return out
}

// The decisions: a user acts on their own jobs only, and another user's
// job answers as an unknown id does (NotFound: a refusal would confirm it
// exists); operators act on every job and on nodes; scripts go to owners
// and admins; a negative nice is for operators; no token, a forged one
// or an expired one is Unauthenticated; an agent's token is for the
// Agent service only.
var (
	othersJob  = map[string]want{"user": refused(codes.NotFound), "operator": allowed, "admin": allowed, "anonymous": refused(codes.Unauthenticated)}
	operators  = map[string]want{"user": refused(codes.PermissionDenied), "operator": allowed, "admin": allowed, "anonymous": refused(codes.Unauthenticated)}
	submitters = map[string]want{"user": allowed, "operator": allowed, "admin": allowed, "anonymous": refused(codes.Unauthenticated),
		"garbage": refused(codes.Unauthenticated), "expired": refused(codes.Unauthenticated), "agent": refused(codes.PermissionDenied)}
	raisers = map[string]want{"user": refused(codes.PermissionDenied), "operator": allowed, "admin": allowed}
)

func authzActions() []action {
	return []action{
		{name: "submit", paths: []path{viaGRPC, viaCLI, viaHTTP}, who: submitters, setup: fresh,
			grpc: func(ctx context.Context, cl *client.Client, t *target) error {
				_, err := cl.Submit(ctx, authzSpec(t.name, 0))
				return err
			},
			cli: func(t *target) []string { return submitArgs(t.name) }, body: func(t *target) []byte { return submitBody(authzSpec(t.name, 0)) },
			effect: submitted, undo: cancelNamed},
		{name: "submit with a negative nice", paths: []path{viaGRPC, viaCLI, viaHTTP}, who: raisers, setup: fresh,
			grpc: func(ctx context.Context, cl *client.Client, t *target) error {
				_, err := cl.Submit(ctx, authzSpec(t.name, -5))
				return err
			},
			cli: func(t *target) []string { return append(submitArgs(t.name), "--nice=-5") }, body: func(t *target) []byte { return submitBody(authzSpec(t.name, -5)) },
			effect: submitted, undo: cancelNamed},
		{name: "show another user's job", paths: []path{viaGRPC, viaCLI}, who: othersJob, setup: bobsJob,
			grpc: func(ctx context.Context, cl *client.Client, t *target) error {
				_, err := cl.GetJob(ctx, t.job, false)
				return err
			},
			cli: func(t *target) []string { return []string{"show", "job", id(t)} }, undo: cancelTarget},
		{name: "read another user's script", paths: []path{viaGRPC}, setup: bobsJob,
			who: map[string]want{"user": refused(codes.NotFound), "operator": refused(codes.PermissionDenied), "admin": allowed, "anonymous": refused(codes.Unauthenticated)},
			grpc: func(ctx context.Context, cl *client.Client, t *target) error {
				j, err := cl.GetJob(ctx, t.job, true)
				if err == nil && j.GetSpec().GetScript() == "" {
					return fmt.Errorf("answered without the script")
				}
				return err
			}, undo: cancelTarget},
		{name: "cancel another user's job", paths: []path{viaGRPC, viaCLI}, who: othersJob, setup: bobsJob,
			grpc: func(ctx context.Context, cl *client.Client, t *target) error {
				_, err := cl.CancelJob(ctx, t.job)
				return err
			},
			cli:    func(t *target) []string { return []string{"cancel", id(t)} },
			effect: jobIs(func(j *pb.Job) bool { return j.GetState() == "CANCELLED" }), undo: cancelTarget},
		{name: "hold another user's job", paths: []path{viaGRPC, viaCLI}, who: othersJob, setup: bobsJob,
			grpc: func(ctx context.Context, cl *client.Client, t *target) error {
				_, err := cl.HoldJob(ctx, t.job)
				return err
			},
			cli:    func(t *target) []string { return []string{"hold", id(t)} },
			effect: jobIs(func(j *pb.Job) bool { return j.GetHold() != "" }), undo: cancelTarget},
		{name: "rename another user's job", paths: []path{viaGRPC, viaCLI}, who: othersJob, setup: bobsJob,
			grpc: func(ctx context.Context, cl *client.Client, t *target) error {
				_, err := cl.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: t.job, Name: proto.String(t.name + "-renamed")})
				return err
			},
			cli:    func(t *target) []string { return []string{"update", "JobId=" + id(t), "Name=" + t.name + "-renamed"} },
			effect: renamed, undo: cancelTarget},
		{name: "lower one's own job's nice", paths: []path{viaGRPC, viaCLI}, who: raisers, setup: ownJob,
			grpc: func(ctx context.Context, cl *client.Client, t *target) error {
				_, err := cl.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: t.job, Nice: proto.Int32(-5)})
				return err
			},
			cli:    func(t *target) []string { return []string{"update", "JobId=" + id(t), "Nice=-5"} },
			effect: jobIs(func(j *pb.Job) bool { return j.GetSpec().GetNice() < 0 }), undo: cancelTarget},
		{name: "drain a node", paths: []path{viaGRPC, viaCLI}, who: operators, setup: fresh,
			grpc: func(ctx context.Context, cl *client.Client, _ *target) error {
				_, err := cl.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "cpu2", State: "DRAIN", Reason: "chaos"})
				return err
			},
			cli:    func(*target) []string { return []string{"update", "NodeName=cpu2", "State=DRAIN", "Reason=chaos"} },
			effect: drained, undo: resume},
		{name: "create a reservation", paths: []path{viaGRPC}, who: operators, setup: fresh,
			grpc: func(ctx context.Context, cl *client.Client, t *target) error {
				_, err := cl.CreateReservation(ctx, &pb.ReservationSpec{Name: t.name, StartTime: api.Timestamp(time.Now().Add(time.Hour)),
					DurationSeconds: 600, Nodes: "cpu2", Users: []string{"root"}})
				return err
			},
			effect: func(ctx context.Context, l *lab, t *target) (bool, error) {
				_, err := l.admin.GetReservation(ctx, t.name)
				return err == nil, nil
			},
			undo: func(ctx context.Context, l *lab, t *target) { _ = l.admin.DeleteReservation(ctx, t.name) }},
		{name: "heartbeat for a node", paths: []path{viaGRPC}, setup: fresh,
			who: map[string]want{"user": refused(codes.PermissionDenied), "operator": refused(codes.PermissionDenied)},
			grpc: func(ctx context.Context, cl *client.Client, _ *target) error {
				_, err := cl.Heartbeat(ctx, &pb.HeartbeatRequest{Node: "cpu2"})
				return err
			}},
	}
}

func id(t *target) string { return strconv.FormatUint(t.job, 10) }

// authzSpec is a held job on the cpu partition with nice.
func authzSpec(name string, nice int32) *pb.JobSpec {
	s := heldSpec(name)
	s.Nice = nice
	return s
}

func submitArgs(name string) []string {
	return []string{"submit", "--hold", "-J", name, "-p", "cpu", "-o", "/dev/null", "--wrap", "true"}
}

// fresh makes a unique name for the cell.
func fresh(_ context.Context, c *cell) (*target, error) {
	return &target{name: fmt.Sprintf("chaos-authz-%d-%s-%s", c.seq, c.id.name, c.path)}, nil
}

// bobsJob is a pending job of another user, waiting for its begin time.
func bobsJob(ctx context.Context, c *cell) (*target, error) {
	return pendingJob(ctx, c, userBob, auth.RoleUser)
}

// ownJob is a pending job of the cell's own identity.
func ownJob(ctx context.Context, c *cell) (*target, error) {
	role := map[string]auth.Role{"user": auth.RoleUser, "operator": auth.RoleOperator, "admin": auth.RoleAdmin}[c.id.name]
	return pendingJob(ctx, c, c.id.user, role)
}

func pendingJob(ctx context.Context, c *cell, user string, role auth.Role) (*target, error) {
	t, _ := fresh(ctx, c)
	cl, err := c.l.client(ctx, user, role)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	spec := heldSpec(t.name)
	spec.Hold, spec.Begin = false, api.Timestamp(time.Now().Add(time.Hour))
	t.job, err = cl.Submit(ctx, spec)
	return t, err
}

func jobIs(ok func(*pb.Job) bool) func(context.Context, *lab, *target) (bool, error) {
	return func(ctx context.Context, l *lab, t *target) (bool, error) {
		j, err := l.admin.GetJob(ctx, t.job, false)
		if err != nil {
			return false, err
		}
		return ok(j), nil
	}
}

func renamed(ctx context.Context, l *lab, t *target) (bool, error) {
	return jobIs(func(j *pb.Job) bool { return j.GetSpec().GetName() == t.name+"-renamed" })(ctx, l, t)
}

// submitted reports whether a job of the cell's name exists.
func submitted(ctx context.Context, l *lab, t *target) (bool, error) {
	jobs, err := l.admin.ListJobs(ctx, &pb.ListJobsRequest{Name: t.name, AllStates: true})
	return len(jobs) > 0, err
}

func cancelNamed(ctx context.Context, l *lab, t *target) {
	jobs, _ := l.admin.ListJobs(ctx, &pb.ListJobsRequest{Name: t.name})
	for _, j := range jobs {
		_, _ = l.admin.CancelJob(ctx, j.GetId())
	}
}

func cancelTarget(ctx context.Context, l *lab, t *target) { _, _ = l.admin.CancelJob(ctx, t.job) }

func drained(ctx context.Context, l *lab, _ *target) (bool, error) {
	n, err := l.admin.GetNode(ctx, "cpu2")
	return err == nil && slices.Contains(n.GetFlags(), "DRAIN"), err
}

func resume(ctx context.Context, l *lab, _ *target) {
	_, _ = l.admin.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "cpu2", State: "RESUME"})
}
