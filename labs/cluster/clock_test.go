package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/healthcheck"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/vendors"
)

func TestClockAddsToItsBase(t *testing.T) {
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := NewClock(func() time.Time { return base })
	for _, tc := range []struct {
		add     time.Duration
		want    time.Duration // offset after the add
		wantErr string
	}{
		{add: 0, want: 0},
		{add: 20 * time.Second, want: 20 * time.Second},
		{add: 15 * time.Second, want: 35 * time.Second},
		{add: -time.Second, want: 35 * time.Second, wantErr: "advance by -1s"},
	} {
		err := c.Add(tc.add)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("Add(%v) = %v, want error %q", tc.add, err, tc.wantErr)
		}
		if got := c.Now(); !got.Equal(base.Add(tc.want)) || c.Offset() != tc.want {
			t.Errorf("after Add(%v): Now %v offset %v, want base+%v", tc.add, got, c.Offset(), tc.want)
		}
	}
}

func TestAdvanceNeedsALabClock(t *testing.T) {
	c := &Cluster{Lab: &labfile.Lab{Name: "plain"}}
	if err := c.Advance(context.Background(), time.Second); err == nil || !strings.Contains(err.Error(), "plain") {
		t.Errorf("Advance on a lab without a clock: %v, want an error naming the lab", err)
	}
}

// Advancing the lab's clock past the controller's node-down timeout moves
// the controller and the simulated hardware together: every agent has
// heartbeated at the new time, no node went down for the jump, and the
// drivers stamp samples with the lab's time.
func TestAdvanceMovesControllerAndHardwareTogether(t *testing.T) {
	lab, err := labfile.Parse("clock", []byte("name: clock\nseed: 1\nnodes:\n  - names: h100-1\n    template: dgx-h100\n  - names: mi300x-1\n    template: mi300x\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clock := NewClock(nil)
	c, err := Up(ctx, Options{Lab: lab, Dir: t.TempDir(), Shim: testShim(t), NoIsolation: true, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Down(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
	}()
	const jump = 45 * time.Second // past nodeDownTimeout (30s)
	before := clock.Now()
	if err := c.Advance(ctx, jump); err != nil {
		t.Fatal(err)
	}
	if time.Since(before) >= jump {
		t.Fatalf("advancing %v took %v of real time", jump, time.Since(before))
	}
	cl, err := c.Client(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Let the controller's maintenance (1 s ticks) look at the new time
	// through two more heartbeat rounds.
	for range 2 {
		if err := c.waitHeartbeats(ctx, cl, clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := cl.ListNodes(ctx, &pb.ListNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if hb := api.Time(n.GetLastHeartbeat()); hb.Before(before.Add(jump)) {
			t.Errorf("node %s last heartbeat %v, before the advanced time %v", n.GetName(), hb, before.Add(jump))
		}
		if strings.Contains(strings.ToLower(n.GetState()), "down") {
			t.Errorf("node %s is %s after the clock advanced in steps", n.GetName(), n.GetState())
		}
	}
	for _, n := range c.Nodes() {
		for _, d := range n.Machine.Drivers {
			s, ok := d.(vendors.Sampler)
			if !ok {
				continue
			}
			got, err := s.Sample(ctx)
			if err != nil || len(got) == 0 {
				t.Fatalf("node %s: sample: %d samples, %v", n.Name, len(got), err)
			}
			if got[0].Time.Before(before.Add(jump)) {
				t.Errorf("node %s %s sample stamped %v, before the lab's time %v", n.Name, d.Info().Name, got[0].Time, before.Add(jump))
			}
		}
	}
}

// A drained GPU's recovery counts consecutive clean samples (six by
// default, one a second): on a lab's clock they come with its steps, each
// sampled and heartbeated at once by the agent, so the GPU returns after
// a few steps of simulated time and well under those six seconds of
// real time, which at most three real samples could fill.
func TestRecoveryPassesInClockStepsNotRealSamples(t *testing.T) {
	lab, err := labfile.Parse("recover", []byte("name: recover\nseed: 3\nnodes:\n  - names: vm-1\n    template: gpu-vm\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clock := NewClock(nil)
	c, err := Up(ctx, Options{Lab: lab, Dir: t.TempDir(), Shim: testShim(t), NoIsolation: true, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Down(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
	}()
	cl, err := c.Client(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	n, _ := c.Node("vm-1")
	gpu := n.Inventory.Devices[0].UUID
	state := func() string {
		nodes, err := cl.ListNodes(ctx, &pb.ListNodesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range nodes[0].GetGpus() {
			if g.GetUuid() == gpu {
				return g.GetState()
			}
		}
		return "missing"
	}
	if err := n.Machine.Faults.WaitWatched(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := n.Machine.Faults.Inject(0, "fatal"); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for state() != "drain" {
		select {
		case <-ctx.Done():
			t.Fatalf("GPU %s not drained after a fatal fault: %v", gpu, ctx.Err())
		case <-tick.C:
		}
	}
	if err := n.Machine.Faults.Repair(0); err != nil {
		t.Fatal(err)
	}
	passes := healthcheck.DefaultConfig().RecoveryPasses
	start, from := time.Now(), clock.Now()
	steps := 0
	for ; state() == "drain"; steps++ {
		if steps == 4*passes {
			t.Fatalf("GPU %s still drained after %d steps of %v", gpu, steps, SampleInterval)
		}
		if err := c.Advance(ctx, SampleInterval); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	t.Logf("resumed after %d steps (clock +%v) in %v of real time", steps, clock.Now().Sub(from).Round(time.Millisecond), took.Round(time.Millisecond))
	if limit := time.Duration(passes/2) * SampleInterval; took >= limit {
		t.Errorf("recovery took %v of real time, want under %v: it waited for real samples instead of the clock's steps", took, limit)
	}
}
