package cluster

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/labs/labfile"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// A lab with three controllers lists them all in its address, they agree
// on one leader, and once the leader is stopped another one acknowledges
// submissions through the same address; the stopped one, restarted,
// follows again.
func TestALabOfThreeControllersSurvivesItsLeader(t *testing.T) {
	lab, err := labfile.Parse("ha", []byte("name: ha\nseed: 1\nnodes:\n  - names: vm-1\n    template: gpu-vm\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Up(ctx, Options{Lab: lab, Dir: t.TempDir(), Shim: testShim(t), Controllers: 3, NoIsolation: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Down(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
	}()
	addrs := c.Controllers()
	if len(addrs) != 3 || c.Addr != strings.Join(addrs, ",") {
		t.Fatalf("Addr %q, controllers %v; want the three controllers, comma-separated", c.Addr, addrs)
	}
	leader, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		st := statusOf(ctx, c.key, a)
		if st == nil || st.GetLeader() != leader || st.GetServing() != (a == leader) || len(st.GetVoters()) != 3 {
			t.Errorf("controller %s says %v; want leader %s among 3 voters, serving only if it leads", a, st, leader)
		}
	}
	cl, err := c.Client(ctx, "root")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	spec := &pb.JobSpec{Name: "held", Partition: "all", Nodes: 1, Ntasks: 1, CpusPerTask: 1, Script: "#!/bin/sh\ntrue\n", Hold: true}
	before, err := cl.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StopController(ctx, leader); err != nil {
		t.Fatal(err)
	}
	after, err := cl.Submit(ctx, spec)
	if err != nil {
		t.Fatalf("submit after the leader stopped: %v", err)
	}
	if after <= before {
		t.Errorf("job ids %d then %d across the failover; want increasing", before, after)
	}
	if j, err := cl.GetJob(ctx, before, false); err != nil || j.GetId() != before {
		t.Errorf("job %d acknowledged before the failover: %v, %v", before, j, err)
	}
	next, err := c.Leader(ctx)
	if err != nil || next == leader {
		t.Fatalf("leader after the stop: %q, %v; want another than %s", next, err, leader)
	}
	// The ledger read is the new leader's, which records what ran.
	if i, _ := controllerIndex(addrs, next); c.LeaderLedger(ctx, time.Minute) != filepath.Join(ControllerStateDir(c.Dir, i), "accounting.db") {
		t.Errorf("ledger after the failover %s, want controller %d's (%s leads)", c.LeaderLedger(ctx, time.Minute), i+1, next)
	}
	// The restarted controller outlives the call that restarted it.
	rctx, rcancel := context.WithCancel(ctx)
	err = c.RestartController(rctx, leader)
	rcancel()
	if err != nil {
		t.Fatal(err)
	}
	if st := statusOf(ctx, c.key, leader); st == nil || st.GetLeader() != next || st.GetServing() {
		t.Errorf("restarted controller %s says %v; want a follower of %s", leader, st, next)
	}
	// With it back, the group survives the loss of its second leader.
	if err := c.StopController(ctx, next); err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(ctx, 15*time.Second)
	defer scancel()
	if _, err := cl.Submit(sctx, spec); err != nil {
		t.Fatalf("submit after the second leader stopped: %v", err)
	}
}
