package controller

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

func arrayNames(jobs []*pb.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.GetArrayName())
	}
	return out
}

// TestArrayTaskRefs: hold, release, update, show and list accept 123_7,
// whether the task was split off already or still waits in the array.
func TestArrayTaskRefs(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	alice := h.as("alice", auth.RoleUser)
	aid := h.submit(alice, cpuTask("arr", "0-9%2"))
	h.pass() // splits tasks 0 and 1 (the throttle); no node, so they wait

	// A task still in the array shows under its own name.
	j, err := alice.GetTask(ctx, aid, 5, false)
	if err != nil || j.GetArrayName() != "1_5" || !j.GetArrayTask() || j.GetState() != StatePending {
		t.Fatalf("show 1_5 before it is split: %v, %v", j, err)
	}
	// Holding it splits it off as a job of its own, as in Slurm.
	held, err := alice.HoldTask(ctx, aid, 5)
	if err != nil || held.GetHold() != "user" || held.GetArrayTaskId() != 5 || held.GetId() == aid {
		t.Fatalf("hold 1_5: %v, %v", held, err)
	}
	if j, err := alice.GetTask(ctx, aid, 5, true); err != nil || j.GetId() != held.GetId() || j.GetHold() != "user" || j.GetSpec().GetScript() == "" {
		t.Fatalf("show 1_5 after the hold: %v, %v", j, err)
	}
	// A task split off already is found by its task id too.
	first, err := alice.GetTask(ctx, aid, 0, false)
	if err != nil || first.GetArrayName() != "1_0" || first.GetId() == aid {
		t.Fatalf("show 1_0: %v, %v", first, err)
	}
	if j, err := alice.HoldTask(ctx, aid, 0); err != nil || j.GetId() != first.GetId() || j.GetHold() != "user" {
		t.Fatalf("hold 1_0: %v, %v", j, err)
	}
	if j, err := alice.ReleaseTask(ctx, aid, 5); err != nil || j.GetHold() != "" {
		t.Fatalf("release 1_5: %v, %v", j, err)
	}
	upd, err := alice.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: aid, ArrayTaskId: proto.Int32(6), Nice: proto.Int32(5)})
	if err != nil || upd.GetSpec().GetNice() != 5 || upd.GetArrayName() != "1_6" {
		t.Fatalf("update 1_6: %v, %v", upd, err)
	}
	// Tasks 7 and 8 still wait in the array; the others it lists are jobs.
	list, err := alice.ListJobs(ctx, &pb.ListJobsRequest{TaskRefs: []string{"1_[5-8]", "1_0"}})
	if err != nil || !slices.Equal(arrayNames(list), []string{"1_5", "1_6", "1_7", "1_8", "1_0"}) {
		t.Fatalf("squeue -j 1_[5-8],1_0: %v, %v", arrayNames(list), err)
	}

	tests := []struct {
		name string
		call func() error
		code codes.Code
		want string
	}{
		{"no such task", func() error { _, err := alice.HoldTask(ctx, aid, 99); return err }, codes.NotFound, "1_99"},
		{"not an array", func() error {
			id := h.submit(alice, cpuTask("plain", ""))
			_, err := alice.GetTask(ctx, id, 1, false)
			return err
		}, codes.NotFound, "is not an array"},
		{"another user's task is unknown to them", func() error { _, err := h.as("bob", auth.RoleUser).HoldTask(ctx, aid, 7); return err }, codes.NotFound, "invalid job id specified: 1"},
		{"release of a task not held", func() error { _, err := alice.ReleaseTask(ctx, aid, 8); return err }, codes.FailedPrecondition, "not held"},
		{"bad task list", func() error {
			_, err := alice.ListJobs(ctx, &pb.ListJobsRequest{TaskRefs: []string{"1_[x"}})
			return err
		}, codes.InvalidArgument, "1_[x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if status.Code(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %v naming %q", err, tt.code, tt.want)
			}
		})
	}

	// What the verbs split off is durable.
	h.restart()
	alice = h.as("alice", auth.RoleUser)
	if j, err := alice.GetTask(ctx, aid, 6, false); err != nil || j.GetId() != upd.GetId() || j.GetSpec().GetNice() != 5 {
		t.Fatalf("1_6 after restart: %v, %v", j, err)
	}
	if j, err := alice.GetTask(ctx, aid, 7, false); err != nil || j.GetId() != aid || j.GetState() != StatePending {
		t.Fatalf("1_7 after restart: %v, %v", j, err)
	}
}
