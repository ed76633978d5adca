package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

func TestSubmitRejectsImpossibleRequests(t *testing.T) {
	h := startController(t, testCluster)
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	perNode := func(n int64, typ string) *pb.GRESRequest {
		return &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Type: typ, Count: n}}}
	}
	tests := []struct {
		name string
		spec *pb.JobSpec
		want string
	}{
		{"unknown partition", &pb.JobSpec{Partition: "gpuz"}, `--partition=gpuz: invalid partition name specified (partitions: gpu, cpu)`},
		{"time over partition max", &pb.JobSpec{Partition: "gpu", TimeLimitSeconds: 2*86400 + 1},
			`--time=2-00:00:01: requested time limit is invalid (missing or exceeds some limit): partition gpu allows at most 1-00:00:00`},
		{"unlimited time on a bounded partition", &pb.JobSpec{Partition: "gpu", TimeLimitSeconds: -1}, `--time=UNLIMITED: requested time limit is invalid`},
		{"more GPUs per node than any node", &pb.JobSpec{Partition: "gpu", Gres: perNode(5, ""), GresOption: "gpu:5"},
			`--gres=gpu:5: requested node configuration is not available: no node of partition gpu has more than 4 GPU(s)`},
		{"gpus-per-node typed", &pb.JobSpec{Partition: "gpu", Gres: perNode(8, ""), GpusPerNodeOption: "8"}, `--gpus-per-node=8: requested node configuration is not available`},
		{"unknown GPU type", &pb.JobSpec{Partition: "gpu", Gres: perNode(1, "a100")},
			`--gres=gpu:a100:1: requested node configuration is not available: partition gpu has no a100 GPUs (has: h100)`},
		{"per-task GPUs exceed a node", &pb.JobSpec{Partition: "gpu", NtasksPerNode: 3, GpusPerTaskOption: "2",
			Gres: &pb.GRESRequest{PerTask: []*pb.GRESTerm{{Name: "gpu", Count: 2}}}}, `--gpus-per-task=2: requested node configuration is not available`},
		{"more GPUs per job than the partition", &pb.JobSpec{Partition: "gpu", GpusOption: "9",
			Gres: &pb.GRESRequest{PerJob: []*pb.GRESTerm{{Name: "gpu", Count: 9}}}}, `--gpus=9: requested node configuration is not available: partition gpu has 8 GPU(s) in all`},
		{"too many nodes", &pb.JobSpec{Partition: "gpu", Nodes: 3}, `--nodes=3: node count specification invalid: partition gpu has 2 node(s)`},
		{"account not the user's", &pb.JobSpec{Partition: "gpu", Account: "bio"}, `--account=bio: invalid account or account/partition combination specified (user alice may use: physics)`},
		{"unknown QOS", &pb.JobSpec{Partition: "gpu", Qos: "platinum"}, `--qos=platinum: invalid qos specification`},
		{"unknown feature", &pb.JobSpec{Partition: "gpu", Constraint: "h100&ib"}, `--constraint=h100&ib: invalid feature specification: no node of partition gpu has feature "ib"`},
		{"node outside partition", &pb.JobSpec{Partition: "gpu", Nodelist: []string{"c1"}}, `--nodelist=c1: invalid node name specified: c1 is not in partition gpu`},
		{"bad dependency", &pb.JobSpec{Partition: "gpu", Dependency: "afterwards:1"}, `--dependency=afterwards:1: job dependency problem`},
		{"nice out of range", &pb.JobSpec{Partition: "gpu", Nice: 20000}, `--nice=20000: must be within -10000..10000`},
		{"negative count", &pb.JobSpec{Partition: "gpu", CpusPerTask: -2}, `--cpus-per-task=-2: must not be negative`},
		{"too many CPUs per node", &pb.JobSpec{Partition: "gpu", CpusPerTask: 17}, `--cpus-per-task=17: requested node configuration is not available: 17 CPUs per node asked`},
		{"relative working directory", &pb.JobSpec{Partition: "gpu", Workdir: "runs/a"}, `--chdir=runs/a: the working directory must be an absolute path`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Script = "#!/bin/sh\n" // each case's refusal is its own field's
			_, err := alice.Submit(context.Background(), tc.spec)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tc.want) {
				t.Fatalf("got %v\nwant InvalidArgument containing %q", err, tc.want)
			}
		})
	}
	if jobs, _ := h.as("root", auth.RoleAdmin).ListJobs(context.Background(), &pb.ListJobsRequest{AllStates: true}); len(jobs) != 0 {
		t.Fatalf("rejected submissions left %d jobs behind", len(jobs))
	}
}

func TestSubmitAppliesDefaults(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	carol := h.as("carol", auth.RoleUser)
	begin := h.clock.Now().Add(time.Hour)
	id := h.submit(carol, &pb.JobSpec{Name: "d", Begin: timestamppb.New(begin), Hold: true, Script: "#!/bin/sh\n"})
	j := h.job(id)
	if j.GetPartition() != "gpu" || j.GetAccount() != "bio" || j.GetQos() != "normal" || j.GetTimeLimitSeconds() != 3600 || j.GetHold() != "user" {
		t.Fatalf("defaults: partition %q account %q qos %q limit %d hold %q", j.GetPartition(), j.GetAccount(), j.GetQos(), j.GetTimeLimitSeconds(), j.GetHold())
	}
	// An API client that names no working directory gets slurmd's fallback,
	// not a launch that fails on the node.
	if got, err := h.as("root", auth.RoleAdmin).GetJob(ctx, id, true); err != nil || got.GetSpec().GetWorkdir() != "/tmp" {
		t.Fatalf("working directory of a job that named none: %q, %v; want /tmp", got.GetSpec().GetWorkdir(), err)
	}
	if resp, err := carol.SubmitTest(ctx, &pb.JobSpec{Partition: "cpu", Script: "#!/bin/sh\n"}); err != nil || resp.GetPartition() != "cpu" || !strings.Contains(resp.GetMessage(), "in partition cpu") {
		t.Fatalf("test-only submit: %v, %v", resp, err)
	}
	if jobs, _ := h.as("root", auth.RoleAdmin).ListJobs(ctx, &pb.ListJobsRequest{AllStates: true}); len(jobs) != 1 {
		t.Fatalf("--test-only queued a job: %d jobs", len(jobs))
	}
}
