package controller

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
