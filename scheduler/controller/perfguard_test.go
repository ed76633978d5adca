package controller

import (
	"context"
	"fmt"
	"testing"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client/jsonsubmit"
	"github.com/parityhpc/parity/scheduler/internal/perfguard"
)

// TestPerfGuardWorkload: the controller's performance-guard workloads
// (see scheduler/internal/perfguard); skipped outside the guard runner.
func TestPerfGuardWorkload(t *testing.T) {
	perfguard.Serve(t, map[string]perfguard.Workload{
		"submit-inmem":      guardSubmitInMemory,
		"controller-sbatch": guardSbatchOverHTTP,
	})
}

// guardSubmitInMemory: the in-memory submit path, as
// BenchmarkSubmitInMemory drives it, requests decoded ahead.
func guardSubmitInMemory(t *testing.T, ops int) {
	h := startController(t, testCluster)
	specs := make([]*pb.JobSpec, ops)
	for i := range specs {
		specs[i] = benchSpec()
	}
	for i, spec := range specs {
		p, err := h.c.prepareSubmit("alice", spec)
		if err != nil {
			t.Fatalf("submission %d: %v", i, err)
		}
		h.c.mu.Lock()
		_, _, err = h.c.insertLocked(p)
		h.c.mu.Unlock()
		if err != nil {
			t.Fatalf("submission %d: %v", i, err)
		}
	}
}

// guardSbatchOverHTTP: what parity-sbatch does per job, one connection a
// submission, answered once the job is committed.
func guardSbatchOverHTTP(t *testing.T, ops int) {
	h := startController(t, testCluster)
	tok := h.token("alice", auth.RoleUser, "")
	cl, err := jsonsubmit.New(h.c.Addr(), tok)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ops {
		spec := &jsonapi.JobSpec{Name: fmt.Sprintf("g%d", i), Partition: "gpu", Script: "#!/bin/sh\ntrue\n", TimeLimitSeconds: 600,
			GRES: &jsonapi.GRESRequest{PerNode: []jsonapi.GRESTerm{{Name: "gpu", Count: 1}}}}
		if _, _, err := cl.Submit(context.Background(), &jsonapi.SubmitRequest{Spec: spec}); err != nil {
			t.Fatalf("submission %d: %v", i, err)
		}
	}
}
