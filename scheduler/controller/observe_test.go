package controller

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
)

func TestDecisionLogRetention(t *testing.T) {
	h := startController(t, testCluster) // eventRetention: 1h
	ctx := context.Background()
	olga := h.as("olga", auth.RoleOperator)
	drain := func(reason string) {
		if _, err := olga.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n2", State: "DRAIN", Reason: reason}); err != nil {
			t.Fatal(err)
		}
	}
	drain("old")
	h.clock.Advance(50 * time.Minute)
	drain("recent")
	h.clock.Advance(20 * time.Minute) // "old" is now 70 min old, "recent" 20
	if err := h.c.maintain(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := olga.Events(ctx, &pb.EventsRequest{Node: "n2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].GetReason() != "recent" {
		t.Fatalf("after retention: %v", evs)
	}
	// Filters: kind, time window, newest-first limit.
	drain("newest")
	if evs, _ := olga.Events(ctx, &pb.EventsRequest{Kinds: []string{EventDrain}, Limit: 1}); len(evs) != 1 || evs[0].GetReason() != "newest" {
		t.Fatalf("limit 1: %v", evs)
	}
	since := timestamppb.New(h.clock.Now())
	if evs, _ := olga.Events(ctx, &pb.EventsRequest{Since: since}); len(evs) != 1 {
		t.Fatalf("since now: %d events", len(evs))
	}
	// Users see node events but not other users' job events.
	h.register("n1", 4)
	id := h.submit(h.as("alice", auth.RoleUser), gpuJob("a", 1))
	h.pass()
	bobs, _ := h.as("bob", auth.RoleUser).Events(ctx, &pb.EventsRequest{})
	for _, e := range bobs {
		if e.GetJobId() == id {
			t.Fatalf("bob sees alice's job event %v", e)
		}
	}
	if len(bobs) == 0 {
		t.Fatal("bob should see node events")
	}
}

func TestMetricsExposition(t *testing.T) {
	h := startController(t, testCluster)
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	h.submit(alice, gpuJob("runs", 4))
	h.submit(alice, gpuJob("waits", 4))
	h.pass()
	resp, err := http.Get("http://" + h.c.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	text := string(body)
	for _, want := range []string{
		`parity_jobs{reason="",state="RUNNING"} 1`,
		`parity_jobs{reason="Resources",state="PENDING"} 1`,
		`parity_jobs_submitted_total 2`,
		`parity_jobs_started_total 1`,
		`parity_schedule_pass_duration_seconds_count 1`,
		`parity_nodes{state="mix"} 1`,
		`parity_nodes{state="unk*"} 2`,
		`parity_gpus{state="alloc"} 4`,
		`parity_store_commit_duration_seconds_bucket`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}

func TestClusterInfo(t *testing.T) {
	h := startController(t, testCluster)
	h.register("n1", 4)
	h.submit(h.as("alice", auth.RoleUser), gpuJob("a", 1))
	info, err := h.as("bob", auth.RoleUser).Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.GetName() != "test" || len(info.GetPartitions()) != 2 || info.GetPartitions()[0].GetTotalGpus() != 4 || info.GetNextJobId() != 0 {
		t.Fatalf("info for a user: %v", info)
	}
	// scontrol show partition's totals and settings: n1 registered 64 GiB;
	// no preemption is configured.
	if gpu := info.GetPartitions()[0]; gpu.GetTotalMemoryMb() != 64<<10 || gpu.GetPreemptMode() != "OFF" || gpu.GetPriorityTier() != 1 {
		t.Fatalf("partition gpu: memory %d MB, preempt mode %q, tier %d; want 65536, OFF, 1", gpu.GetTotalMemoryMb(), gpu.GetPreemptMode(), gpu.GetPriorityTier())
	}
	if info.GetJobsByState()[StatePending] != 0 {
		t.Fatal("bob counts alice's jobs")
	}
	// The cluster file says nothing of reclamation: its defaults (on, in
	// dry-run) are what a client sees.
	def := config.DefaultReclamation()
	if r := info.GetReclamation(); !r.GetEnabled() || r.GetDryRun() != def.Policy.DryRun || r.GetIdleFor().AsDuration() != def.Policy.IdleFor ||
		r.GetGrace().AsDuration() != def.Policy.Grace || r.GetAction() != string(def.Policy.Mode) {
		t.Errorf("reclamation policy %v, want the defaults %+v", r, def)
	}
}
