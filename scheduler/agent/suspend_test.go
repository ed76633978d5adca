package agent

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// admin is a client acting as root, an admin of the lab cluster.
func (c *cluster) admin() *client.Client {
	c.t.Helper()
	tok, err := auth.Sign(c.ctrl.Key(), auth.Claims{User: "root", Role: auth.RoleAdmin, IssuedAt: time.Now()})
	if err != nil {
		c.t.Fatal(err)
	}
	cl, err := client.Dial(context.Background(), c.ctrl.Addr(), tok)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { cl.Close() })
	return cl
}

// stopped reports whether process pid is stopped (state T in /proc).
func stopped(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0] == "T"
}

// waitStopped polls the job's shell until it is (or is no longer) stopped.
func waitStopped(t *testing.T, pid int, want bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for stopped(t, pid) != want {
		if time.Now().After(deadline) {
			t.Fatalf("process %d stopped=%v after %s, want %v", pid, !want, waitTimeout, want)
		}
		time.Sleep(20 * time.Millisecond) // polling the agent's asynchronous order, bounded by the deadline
	}
}

// TestSuspendResumeThroughTheController: an admin's suspend reaches the
// agent, which stops the job's processes; resume continues them; a
// suspended job can still be cancelled.
func TestSuspendResumeThroughTheController(t *testing.T) {
	c := startCluster(t)
	ready := filepath.Join(c.work, "ready")
	if err := unix.Mkfifo(ready, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(ready, 0o666)
	spec := gpuSpec(t, `echo $$ > "$W/pid"; echo ready > "$W/ready"; while :; do sleep 1000 & wait $!; done`, 1)
	spec.Workdir, spec.Env["W"] = c.work, c.work
	id := c.submit(spec)
	got := make(chan string, 1)
	go func() { b, _ := os.ReadFile(ready); got <- string(b) }()
	select {
	case <-got:
	case <-time.After(waitTimeout):
		t.Fatal("job never started")
	}
	b, err := os.ReadFile(filepath.Join(c.work, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.user().SuspendJob(ctx, id, nil); err == nil {
		t.Fatal("a user suspended a job")
	}
	admin := c.admin()
	if j, err := admin.SuspendJob(ctx, id, nil); err != nil || j.GetState() != "SUSPENDED" {
		t.Fatalf("suspend: %v, %v", j, err)
	}
	waitStopped(t, pid, true)
	if j, err := admin.ResumeJob(ctx, id, nil); err != nil || j.GetState() != "RUNNING" {
		t.Fatalf("resume: %v, %v", j, err)
	}
	waitStopped(t, pid, false)
	if _, err := admin.SuspendJob(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, pid, true)
	if _, err := c.user().CancelJob(ctx, id); err != nil {
		t.Fatal(err)
	}
	if j := c.waitEnd(id); j.GetState() != "CANCELLED" {
		t.Errorf("cancelled suspended job ended %s (%s)", j.GetState(), j.GetReason())
	}
	c.waitSettled()
}
