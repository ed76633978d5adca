package controller

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// TestNiceRuleOnEveryPath: one rule for a negative nice (operators only)
// on submit over gRPC, submit over HTTP and update, in the same words; a
// plain user's positive nice and an operator's negative one pass all three.
func TestNiceRuleOnEveryPath(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	const denied = "=-1: access/permission denied: only operators may set a negative nice"
	for _, tc := range []struct {
		user string
		role auth.Role
		nice int32
		code codes.Code
	}{{"alice", auth.RoleUser, -1, codes.PermissionDenied}, {"alice", auth.RoleUser, 5, codes.OK}, {"bob", auth.RoleOperator, -1, codes.OK}} {
		t.Run(fmt.Sprintf("%s nice %d", tc.user, tc.nice), func(t *testing.T) {
			spec := inputJob()
			spec.Nice = tc.nice
			for path, a := range submitBoth(t, h, tc.user, tc.role, spec) {
				if a.code != tc.code.String() || tc.code != codes.OK && !strings.Contains(a.msg, "--nice"+denied) {
					t.Errorf("submit over %s: %s %q, want %v", path, a.code, a.msg, tc.code)
				}
			}
			cl := h.as(tc.user, tc.role)
			id, err := cl.Submit(ctx, &pb.JobSpec{Name: "n", Partition: "cpu", Script: "#!/bin/sh\n"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = cl.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: id, Nice: proto.Int32(tc.nice)})
			if status.Code(err) != tc.code || tc.code != codes.OK && !strings.Contains(status.Convert(err).Message(), "Nice"+denied) {
				t.Errorf("update: %v, want %v", err, tc.code)
			}
		})
	}
}

// TestMaxJobCount: the controller holds at most MaxJobCount jobs; one more
// is refused on both submit paths with the limit named (HTTP 429), and
// nothing is queued for it.
func TestMaxJobCount(t *testing.T) {
	h := startController(t, limitsCluster)
	alice := h.as("alice", auth.RoleUser)
	for i := range 3 {
		h.submit(alice, &pb.JobSpec{Name: fmt.Sprint("j", i), Partition: "cpu", Script: "#!/bin/sh\n"})
	}
	for path, a := range submitBoth(t, h, "alice", auth.RoleUser, inputJob()) {
		if a.code != codes.ResourceExhausted.String() || !strings.Contains(a.msg, "submit: MaxJobCount=3 reached: the controller holds 3 jobs") {
			t.Errorf("4th job over %s: %s %q", path, a.code, a.msg)
		}
	}
	st, _ := postSubmit(t, http.DefaultClient, "http://"+h.c.Addr(), "Bearer "+h.token("alice", auth.RoleUser, ""), http.MethodPost,
		jsonBody(t, jsonapi.SubmitRequest{Spec: inputJob()}))
	if st != http.StatusTooManyRequests {
		t.Errorf("HTTP status %d, want 429", st)
	}
	if jobs, _ := h.as("root", auth.RoleAdmin).ListJobs(context.Background(), &pb.ListJobsRequest{AllStates: true}); len(jobs) != 3 {
		t.Fatalf("%d jobs queued, want 3", len(jobs))
	}
}

// TestUpdateAndCancelRefuseBadText: what an update or a cancel stores is
// checked as a submission is: no control character, within its bound.
func TestUpdateAndCancelRefuseBadText(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	alice := h.as("alice", auth.RoleUser)
	id := h.submit(alice, &pb.JobSpec{Name: "u", Partition: "cpu", Script: "#!/bin/sh\n"})
	for _, tc := range []struct {
		name string
		req  *pb.UpdateJobRequest
		want string
	}{
		{"name forging a line", &pb.UpdateJobRequest{Name: proto.String("x\nJobState=COMPLETED")}, `JobName="x\nJobState=COMPLETED": contains a control character`},
		{"comment with NUL", &pb.UpdateJobRequest{Comment: proto.String("a\x00")}, `Comment="a\x00": contains a control character`},
		{"partition with an escape", &pb.UpdateJobRequest{Partition: proto.String("gpu\x1b")}, `Partition="gpu\x1b"`},
		{"name too long", &pb.UpdateJobRequest{Name: proto.String(strings.Repeat("n", 2000))}, "JobName: 2000 bytes is more than the limit of 1024"},
		{"time limit past time.Duration", &pb.UpdateJobRequest{TimeLimitSeconds: proto.Int64(1 << 62)}, "TimeLimit=4611686018427387904: must be within 1..9223372036"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.JobId = id
			_, err := alice.UpdateJob(ctx, tc.req)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tc.want) {
				t.Fatalf("got %v, want InvalidArgument containing %q", err, tc.want)
			}
		})
	}
	_, err := pb.NewJobsClient(alice.Conn()).Cancel(ctx, &pb.CancelRequest{JobId: id, Reason: "bye\nJobState=COMPLETED"})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), `reason="bye\nJobState=COMPLETED"`) {
		t.Fatalf("cancel with a forged reason: %v", err)
	}
	if j := h.job(id); j.GetSpec().GetName() != "u" || j.GetState() != StatePending {
		t.Fatalf("refused changes changed the job: %q %s", j.GetSpec().GetName(), j.GetState())
	}
}
