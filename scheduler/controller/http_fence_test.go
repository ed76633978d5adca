package controller

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
)

// An HTTP read made while a change is in memory but not committed waits
// for the commit, and once the commit fails (memory rolled back) it is
// refused in Slurm's envelope instead of showing the change that never
// happened, as TestAReadNeverShowsAChangeThatWasRolledBack shows over
// gRPC.
func TestAnHTTPReadNeverShowsAChangeThatWasRolledBack(t *testing.T) {
	tr := startTrio(t)
	lead := tr.leader()
	ctx := context.Background()
	cl := tr.client(lead, "alice", auth.RoleUser)
	id, err := cl.Submit(ctx, gpuJob("kept", 1))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := auth.Sign(tr.key, auth.Claims{User: "alice", Role: auth.RoleUser, IssuedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	c := tr.cs[lead]
	committing, release := loseNextCommit(t, c)
	cancelled := make(chan error, 1)
	go func() { _, err := cl.CancelJob(ctx, id); cancelled <- err }()
	<-committing // the cancel is in memory, its commit in flight
	path := fmt.Sprintf("/slurm/v0.0.44/job/%d", id)
	type answer struct {
		resp *http.Response
		body []byte
		err  error
	}
	read := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+lead+path, nil)
		req.Header.Set("X-SLURM-USER-TOKEN", tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			read <- answer{err: err}
			return
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		read <- answer{resp, body, err}
	}()
	eventually(t, c.fence.waited, "the HTTP read never waited on the commit fence")
	release()
	if err := <-cancelled; err == nil {
		t.Fatal("the cancel was acknowledged though its commit failed")
	}
	a := <-read
	if a.err != nil {
		t.Fatal(a.err)
	}
	if a.resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("the HTTP read made while the lost cancel was in memory: %d %s, want 503", a.resp.StatusCode, a.body)
	}
	if msg := slurmErrorAnswer(t, path, a.resp, a.body); !strings.Contains(msg, "cannot vouch") {
		t.Fatalf("the refusal says %q, want why it cannot answer", msg)
	}
	if j, err := cl.GetJob(ctx, id, false); err != nil || j.GetState() != "PENDING" {
		t.Fatalf("after the rolled-back cancel the job is %s (%v), want it still PENDING", j.GetState(), err)
	}
}
