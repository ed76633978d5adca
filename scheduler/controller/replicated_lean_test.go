package controller

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client/jsonsubmit"
)

// leanSpec is a job as the lean sbatch posts it.
func leanSpec(name string) *jsonapi.JobSpec {
	return &jsonapi.JobSpec{Name: name, Partition: "gpu", Script: "#!/bin/sh\necho " + name + "\n", TimeLimitSeconds: 600,
		GRES: &jsonapi.GRESRequest{PerNode: []jsonapi.GRESTerm{{Name: "gpu", Count: 1}}}}
}

// TestTheLeanSubmitClientFollowsTheLeader: parity-sbatch's client (HTTP
// over plain TCP, no gRPC) given the controllers' list with the leader
// last goes to the leader, and after the leader crashes submits to the
// new one; a retried submission (same key) is the same job.
func TestTheLeanSubmitClientFollowsTheLeader(t *testing.T) {
	tr := startTrio(t)
	lead := tr.leader()
	order := slices.DeleteFunc(slices.Clone(tr.addrs), func(a string) bool { return a == lead })
	order = append(order, lead) // followers first: the client must be sent on
	tok, err := auth.Sign(tr.key, auth.Claims{User: "alice", Role: auth.RoleUser, IssuedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	lean, err := jsonsubmit.New(strings.Join(order, ","), tok)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	first, _, err := lean.Submit(ctx, &jsonapi.SubmitRequest{Spec: leanSpec("before")})
	if err != nil {
		t.Fatalf("submit through the list %v: %v", order, err)
	}
	again, _, err := lean.Submit(ctx, &jsonapi.SubmitRequest{Spec: leanSpec("before"), IdempotencyKey: "k-1"})
	if err != nil {
		t.Fatal(err)
	}
	retried, _, err := lean.Submit(ctx, &jsonapi.SubmitRequest{Spec: leanSpec("before"), IdempotencyKey: "k-1"})
	if err != nil || retried.JobID != again.JobID || again.JobID == first.JobID {
		t.Fatalf("a retried submission answered job %v (%v), want the first answer's %d (and not %d)", retried, err, again.JobID, first.JobID)
	}

	tr.crash(lead)
	after, _, err := lean.Submit(ctx, &jsonapi.SubmitRequest{Spec: leanSpec("after")})
	if err != nil {
		t.Fatalf("submit after the leader crashed: %v", err)
	}
	newLead := tr.leader()
	jobs, err := tr.client(newLead, "alice", auth.RoleUser).ListJobs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, j := range jobs {
		ids = append(ids, uint64(j.GetId()))
	}
	for _, want := range []uint64{first.JobID, again.JobID, after.JobID} {
		if !slices.Contains(ids, want) {
			t.Fatalf("the new leader %s holds jobs %v; job %d, acknowledged, is missing", newLead, ids, want)
		}
	}
	if len(ids) != 3 {
		t.Fatalf("the new leader holds jobs %v, want 3 (the retry made none)", ids)
	}
}

// TestTheLeanSubmitClientSaysWhyWithoutALeader: with two of three
// controllers down there is no leader; the lean client gives up before
// its deadline with the controllers' own words.
func TestTheLeanSubmitClientSaysWhyWithoutALeader(t *testing.T) {
	tr := startTrio(t)
	lead := tr.leader()
	var left string
	for _, a := range tr.addrs {
		if a != lead && left == "" {
			left = a
			continue
		}
		tr.crash(a)
		holdDead(t, a)
	}
	tok, err := auth.Sign(tr.key, auth.Claims{User: "alice", Role: auth.RoleUser, IssuedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	lean, err := jsonsubmit.New(strings.Join(tr.addrs, ","), tok)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, _, err = lean.Submit(ctx, &jsonapi.SubmitRequest{Spec: leanSpec("lost")})
	var refused *jsonsubmit.Error
	if !errors.As(err, &refused) || refused.Status != 503 || !strings.Contains(refused.Message, "no leader among") || ctx.Err() != nil {
		t.Fatalf("submit with no quorum: %v (context %v), want a 503 refusal saying no leader, before the deadline", err, ctx.Err())
	}
}

// holdDead keeps a crashed controller's port from being taken by another
// test process's controller (CI runs packages side by side; one once
// answered this test with its own cluster key): it accepts and drops
// every connection, as a dead machine's port would fail them.
func holdDead(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Logf("could not hold %s: %v", addr, err)
		return
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
}
