package controller

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// limitCluster gives QOS normal the limits spec.
func limitCluster(spec string) string {
	return strings.Replace(testCluster, "qos:\n  - name: high\n", "qos:\n  - name: normal\n    limits: \""+spec+"\"\n  - name: high\n", 1)
}

func TestSubmitLimits(t *testing.T) {
	tests := []struct {
		name   string
		limits string
		arrays []string // one submission each ("" = a plain job)
		wantOK int      // how many are accepted
	}{
		{"submit count", "MaxSubmitJobs=2", []string{"", "", ""}, 2},
		{"array tasks count as jobs", "MaxSubmitJobs=5", []string{"0-3", "0-3"}, 1},
		{"a running limit is not a submit limit", "MaxJobs=1", []string{"", "", ""}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startController(t, limitCluster(tt.limits))
			alice := h.as("alice", auth.RoleUser)
			ok := 0
			for _, arr := range tt.arrays {
				_, err := alice.Submit(context.Background(), cpuTask("j", arr))
				switch {
				case err == nil:
					ok++
				case status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "MaxSubmitJobs"):
					t.Fatalf("refusal does not name the limit: %v", err)
				}
			}
			if ok != tt.wantOK {
				t.Fatalf("%d submissions accepted, want %d", ok, tt.wantOK)
			}
		})
	}
}

func TestLimitsHoldJobsInThePass(t *testing.T) {
	h := startController(t, limitCluster("MaxTRESPerUser=gres/gpu=4"))
	h.register("n1", 4)
	h.register("n2", 4)
	alice := h.as("alice", auth.RoleUser)
	first := h.submit(alice, gpuJob("a", 4))
	second := h.submit(alice, gpuJob("b", 4))
	h.pass()
	if st := h.job(first).GetState(); st != StateRunning {
		t.Fatalf("first job is %s", st)
	}
	j := h.job(second)
	if j.GetState() != StatePending || !strings.HasPrefix(j.GetReason(), "QOS") {
		t.Fatalf("second job over the per-user GPU limit: %s %s (%s)", j.GetState(), j.GetReason(), j.GetReasonDetail())
	}
	// bob is not held by alice's use.
	bob := h.submit(h.as("bob", auth.RoleUser), gpuJob("c", 4))
	h.pass()
	if st := h.job(bob).GetState(); st != StateRunning {
		t.Fatalf("bob's job is %s", st)
	}
}

// TestSubmitRefusesGPUsOverPerJobLimit: with DenyOnLimit, a job asking
// more GPUs than MaxTRESPerJob allows (untyped or of the limited type) is
// refused at submit with Slurm's message naming the limit; without it,
// it is accepted and pends.
func TestSubmitRefusesGPUsOverPerJobLimit(t *testing.T) {
	deny := func(limits string) string {
		return strings.Replace(limitCluster(limits), "    limits: \""+limits+"\"\n", "    limits: \""+limits+"\"\n    denyOnLimit: true\n", 1)
	}
	typed := func(n int64, typ string) *pb.JobSpec {
		s := gpuJob("typed", n)
		s.Gres.PerNode[0].Type = typ
		return s
	}
	perJob := func(n int64) *pb.JobSpec {
		s := gpuJob("total", 0)
		s.Gres = &pb.GRESRequest{PerJob: []*pb.GRESTerm{{Name: "gpu", Count: n}}}
		return s
	}
	twoNodes := func(n int64) *pb.JobSpec { s := gpuJob("two", n); s.Nodes = 2; return s }
	tests := []struct {
		name    string
		cluster string
		spec    *pb.JobSpec
		want    string // "" = accepted
	}{
		{"per node over", deny("MaxTRESPerJob=gres/gpu=2"), gpuJob("a", 4), "MaxTRESPerJob gres/gpu=2 for QOS normal, job asks 4"},
		{"at the limit", deny("MaxTRESPerJob=gres/gpu=4"), gpuJob("a", 4), ""},
		{"nodes times per node", deny("MaxTRESPerJob=gres/gpu=4"), twoNodes(3), "job asks 6"},
		{"--gpus total", deny("MaxTRESPerJob=gres/gpu=4"), perJob(5), "job asks 5"},
		{"typed limit, typed request", deny("MaxTRESPerJob=gres/gpu:h100=2"), typed(3, "h100"), "MaxTRESPerJob gres/gpu:h100=2"},
		{"typed limit, untyped request", deny("MaxTRESPerJob=gres/gpu:h100=2"), gpuJob("a", 3), ""},
		{"no DenyOnLimit: pends instead", limitCluster("MaxTRESPerJob=gres/gpu=2"), gpuJob("a", 4), ""},
		{"per node limit", deny("MaxTRESPerNode=gres/gpu=2"), twoNodes(3), "MaxTRESPerNode gres/gpu=2 for QOS normal, job asks 3"},
		{"per node limit, spread thin", deny("MaxTRESPerNode=gres/gpu=2"), twoNodes(2), ""},
		{"per node limit, --gpus over explicit nodes", deny("MaxTRESPerNode=gres/gpu=2"), func() *pb.JobSpec { s := perJob(6); s.Nodes = 2; return s }(), "job asks 3"},
		{"per node limit, the pass spreads --gpus", deny("MaxTRESPerNode=gres/gpu=2"), perJob(4), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startController(t, tt.cluster)
			tt.spec.Qos = "normal"
			_, err := h.as("alice", auth.RoleUser).Submit(context.Background(), tt.spec)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want == "":
			case status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "Job violates accounting/QOS policy") || !strings.Contains(err.Error(), tt.want):
				t.Fatalf("got %v, want a refusal naming %q", err, tt.want)
			}
		})
	}
}

// TestPerNodeLimitPendsInThePass: without DenyOnLimit a job over
// MaxTRESPerNode is accepted and pends with Slurm's reason.
func TestPerNodeLimitPendsInThePass(t *testing.T) {
	h := startController(t, limitCluster("MaxTRESPerNode=gres/gpu=2"))
	h.register("n1", 4)
	h.register("n2", 4)
	alice := h.as("alice", auth.RoleUser)
	big, small := gpuJob("big", 3), gpuJob("small", 2)
	big.Qos, small.Qos = "normal", "normal"
	b, s := h.submit(alice, big), h.submit(alice, small)
	h.pass()
	if j := h.job(b); j.GetState() != StatePending || j.GetReason() != "QOSMaxGRESPerNode" || !strings.Contains(j.GetReasonDetail(), "MaxTRESPerNode gres/gpu=2") {
		t.Fatalf("job over the per-node limit: %s %s (%s)", j.GetState(), j.GetReason(), j.GetReasonDetail())
	}
	if st := h.job(s).GetState(); st != StateRunning {
		t.Fatalf("job within the per-node limit is %s", st)
	}
}
