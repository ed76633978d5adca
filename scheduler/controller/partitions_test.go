package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// multiCluster has two one-node GPU partitions with different default
// time limits and a short debug partition on the same nodes.
const multiCluster = `
cluster: test
admins: [root]
partitions:
  - name: a
    nodes: n1
    default: true
    defaultTime: "1:00:00"
  - name: b
    nodes: n2
    defaultTime: "2:00:00"
  - name: short
    nodes: n[1-2]
    maxTime: "0:10:00"
nodes:
  - names: n[1-2]
    gpus: 4
    gpuType: h100
accounts:
  - name: physics
    users: [alice]
heartbeatInterval: 10s
nodeDownTimeout: 1m
`

func fourGPUs(name string, parts ...string) *pb.JobSpec {
	return &pb.JobSpec{Name: name, Partition: parts[0], Partitions: parts, Script: "#!/bin/sh\ntrue\n",
		Gres: &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Count: 4}}}}
}

// A job submitted to a,b while a is full pends listing both, then runs in
// b: the record, its time limit (b's default), the partition filter and
// the accounting line all say b.
func TestMultiPartitionJobRunsWhereThereIsRoom(t *testing.T) {
	h, path := startWithLedger(t, multiCluster)
	ctx := context.Background()
	h.register("n1", 4)
	h.register("n2", 4)
	alice := h.as("alice", auth.RoleUser)
	filler := h.submit(alice, fourGPUs("filler", "a"))
	h.pass()
	if j := h.job(filler); j.GetState() != StateRunning || j.GetPartition() != "a" {
		t.Fatalf("filler: %s in %s", j.GetState(), j.GetPartition())
	}
	held := fourGPUs("multi", "a", "b")
	held.Hold = true
	id := h.submit(alice, held)
	// An older client sends the list as one comma-separated partition.
	old := &pb.JobSpec{Name: "old", Partition: "b,a", Hold: true, Script: "#!/bin/sh\ntrue\n"}
	oldID := h.submit(alice, old)
	for _, c := range []struct {
		id   uint64
		want []string
	}{{id, []string{"a", "b"}}, {oldID, []string{"b", "a"}}} {
		j := h.job(c.id)
		if j.GetState() != StatePending || !slices.Equal(j.GetPartitions(), c.want) || j.GetPartition() != c.want[0] || j.GetTimeLimitSeconds() != 0 {
			t.Fatalf("pending job %d: %s partition %q partitions %v limit %d", c.id, j.GetState(), j.GetPartition(), j.GetPartitions(), j.GetTimeLimitSeconds())
		}
	}
	admin := h.as("root", auth.RoleAdmin)
	listed, err := admin.ListJobs(ctx, &pb.ListJobsRequest{Partitions: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 2 {
		t.Fatalf("squeue -p b lists %d jobs, want the two pending ones that may run there", len(listed))
	}
	if _, err := alice.ReleaseJob(ctx, id); err != nil {
		t.Fatal(err)
	}
	h.pass()
	j := h.job(id)
	if j.GetState() != StateRunning || j.GetPartition() != "b" || len(j.GetPartitions()) != 0 || j.GetAlloc()[0].GetNode() != "n2" {
		t.Fatalf("job %d: %s in %q (%v) on %v, want RUNNING in b on n2", id, j.GetState(), j.GetPartition(), j.GetPartitions(), j.GetAlloc())
	}
	if got := time.Duration(j.GetTimeLimitSeconds()) * time.Second; got != 2*time.Hour {
		t.Errorf("time limit %v, want b's default 2h", got)
	}
	if listed, _ := admin.ListJobs(ctx, &pb.ListJobsRequest{Partitions: []string{"a"}}); len(listed) != 2 {
		t.Errorf("squeue -p a lists %d jobs, want the filler and the held pending job", len(listed))
	}
	lines := readLedger(t, h, path)
	if rec, ok := lines[[2]uint64{id, 0}]; !ok || rec.Partition != "b" {
		t.Fatalf("ledger line %+v (found %v), want partition b", rec, ok)
	}
}

func TestMultiPartitionSubmitChecksEachPartition(t *testing.T) {
	h := startController(t, multiCluster)
	h.register("n1", 4)
	h.register("n2", 4)
	alice := h.as("alice", auth.RoleUser)
	ctx := context.Background()
	tests := []struct {
		name      string
		spec      *pb.JobSpec
		err       string   // wanted error text; "" = accepted
		parts     []string // the partitions kept
		warnings  []string
		testOnly  string
		wantLimit time.Duration
	}{
		{name: "every partition kept, best first", spec: fourGPUs("x", "short", "b"), parts: []string{"short", "b"},
			testOnly: "Job 2 to start at 2025-06-02T09:00:00Z using 1 processors on nodes n1 in partition short"},
		{name: "a partition the time limit exceeds is dropped with a note",
			spec:  func() *pb.JobSpec { s := fourGPUs("x", "short", "b"); s.TimeLimitSeconds = 3600; return s }(),
			parts: []string{"b"}, warnings: []string{"partition short dropped: --time=01:00:00"}, wantLimit: time.Hour},
		{name: "a partition without the nodes asked for is dropped",
			spec:  func() *pb.JobSpec { s := fourGPUs("x", "a", "short"); s.Nodes = 2; return s }(),
			parts: []string{"short"}, warnings: []string{"partition a dropped: --nodes=2: node count specification invalid: partition a has 1 node(s)"},
			wantLimit: 10 * time.Minute},
		{name: "the job fits none", spec: func() *pb.JobSpec { s := fourGPUs("x", "a", "short"); s.TimeLimitSeconds = 3600; s.Nodes = 2; return s }(),
			err: "--partition=a,short: the job fits none of its partitions: --nodes=2: node count specification invalid: partition a has 1 node(s); --time=01:00:00"},
		{name: "an unknown partition in the list", spec: fourGPUs("x", "a", "nosuch"),
			err: "--partition=a,nosuch: invalid partition name specified: nosuch"},
		{name: "a partition named twice counts once", spec: fourGPUs("x", "b", "a", "b"), parts: []string{"b", "a"}},
	}
	var kept []uint64
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Hold = true
			resp, err := alice.SubmitDetailed(ctx, tc.spec)
			if tc.err != "" {
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tc.err) {
					t.Fatalf("got %v\nwant InvalidArgument containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.GetWarnings()) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %q", resp.GetWarnings(), tc.warnings)
			}
			for i, w := range tc.warnings {
				if !strings.Contains(resp.GetWarnings()[i], w) {
					t.Errorf("warning %q lacks %q", resp.GetWarnings()[i], w)
				}
			}
			kept = append(kept, resp.GetJobId())
			j := h.job(resp.GetJobId())
			got := j.GetPartitions()
			if len(got) == 0 {
				got = []string{j.GetPartition()}
			}
			if !slices.Equal(got, tc.parts) || j.GetPartition() != tc.parts[0] {
				t.Errorf("partitions %v (partition %q), want %v", got, j.GetPartition(), tc.parts)
			}
			if got := time.Duration(j.GetTimeLimitSeconds()) * time.Second; got != tc.wantLimit {
				t.Errorf("time limit %v, want %v", got, tc.wantLimit)
			}
			if tc.testOnly != "" {
				r, err := alice.SubmitTest(ctx, tc.spec)
				if err != nil || r.GetMessage() != tc.testOnly {
					t.Errorf("test-only: %q, %v; want %q", r.GetMessage(), err, tc.testOnly)
				}
			}
		})
	}
	// scontrol update Partition= takes a list too, and a single name again.
	upd := kept[0]
	for _, c := range []struct {
		value string
		want  []string
	}{{"b,a", []string{"b", "a"}}, {"a", nil}} {
		v := c.value
		j, err := alice.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: upd, Partition: &v})
		if err != nil {
			t.Fatalf("update Partition=%s: %v", v, err)
		}
		if !slices.Equal(j.GetPartitions(), c.want) || j.GetPartition() != strings.Split(v, ",")[0] {
			t.Errorf("after Partition=%s: partition %q partitions %v, want %v", v, j.GetPartition(), j.GetPartitions(), c.want)
		}
	}
	// The lists are durable: a restarted controller still has them.
	before := map[uint64]string{}
	for _, id := range kept {
		j := h.job(id)
		before[id] = j.GetPartition() + " " + strings.Join(j.GetPartitions(), ",")
	}
	h.restart()
	for _, id := range kept {
		j := h.job(id)
		if got := j.GetPartition() + " " + strings.Join(j.GetPartitions(), ","); got != before[id] {
			t.Errorf("job %d after a restart: %q, before %q", id, got, before[id])
		}
	}
}
