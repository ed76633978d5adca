package controller

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/client/jsonsubmit"
)

// buildParity compiles cmd/parity into a temporary directory.
func buildParity(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "parity")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(gobin, "build", "-o", bin, "github.com/parityhpc/parity/cmd/parity").CombinedOutput()
	if err != nil {
		t.Fatalf("go build cmd/parity: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "controller", "--help").CombinedOutput(); err != nil || !strings.Contains(string(out), "--address-file") {
		t.Fatalf("cmd/parity has no controller verb (main.go must register newControllerCmd()): %v\n%s", err, out)
	}
	return bin
}

// child is a `parity controller` process.
type child struct {
	cmd  *exec.Cmd
	addr string
	logs *strings.Builder
}

func startChild(t *testing.T, bin, cfg, addrFile string) *child {
	t.Helper()
	os.Remove(addrFile)
	logs := &strings.Builder{}
	cmd := exec.Command(bin, "controller", "--config", cfg, "--address-file", addrFile, "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := &child{cmd: cmd, logs: logs}
	t.Cleanup(func() { ch.kill() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(addrFile)
		if err == nil && len(b) > 0 {
			ch.addr = strings.TrimSpace(string(b))
			return ch
		}
		if time.Now().After(deadline) {
			t.Fatalf("controller did not write %s within 30s", addrFile)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (c *child) kill() {
	if c.cmd.ProcessState == nil {
		c.cmd.Process.Kill() // SIGKILL: no shutdown path runs
		c.cmd.Wait()
	}
}

// TestSIGKILLLosesNoAcknowledgedJob submits from concurrent clients to a
// child `parity controller` (half over gRPC, half as JSON over HTTP, what
// parity-sbatch sends), SIGKILLs it mid-stream, restarts it on the same
// state directory and finds every acknowledged job.
func TestSIGKILLLosesNoAcknowledgedJob(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/parity and runs child processes")
	}
	bin := buildParity(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	cfg := filepath.Join(dir, "cluster.yaml")
	text := fmt.Sprintf("cluster: crash\ncontroller:\n  listen: 127.0.0.1:0\n  stateDir: %s\npartitions:\n  - name: gpu\n    nodes: n[1-4]\nscheduler:\n  interval: 1h\n", state)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	addrFile := filepath.Join(dir, "addr")
	t0 := time.Now()
	first := startChild(t, bin, cfg, addrFile)
	t.Logf("started in %v", time.Since(t0))
	key, err := auth.LoadKey(filepath.Join(state, "cluster.key"))
	if err != nil {
		t.Fatal(err)
	}
	token := func(user string, role auth.Role) string {
		tok, err := auth.Sign(key, auth.Claims{User: user, Role: role, IssuedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	ctx := context.Background()
	cl, err := client.Dial(ctx, first.addr, token("alice", auth.RoleUser))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	hc, err := jsonsubmit.New(first.addr, token("alice", auth.RoleUser))
	if err != nil {
		t.Fatal(err)
	}
	submit := func(ctx context.Context, overHTTP bool, name string) (uint64, error) {
		if !overHTTP {
			return cl.Submit(ctx, &pb.JobSpec{Name: name, Script: "#!/bin/sh\ntrue\n"})
		}
		resp, _, err := hc.Submit(ctx, &jsonapi.SubmitRequest{Spec: &jsonapi.JobSpec{Name: name, Script: "#!/bin/sh\ntrue\n"}})
		if err != nil {
			return 0, err
		}
		return resp.JobID, nil
	}

	const workers, killAfter = 8, 300
	var mu sync.Mutex
	acked := map[uint64]string{}
	var count atomic.Int64
	killed := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				name := fmt.Sprintf("w%d-%d", w, i)
				cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				id, err := submit(cctx, w%2 == 1, name)
				cancel()
				if err != nil {
					select {
					case <-killed:
						return // the controller is gone: expected
					default:
						t.Errorf("submit before the kill: %v", err)
						return
					}
				}
				mu.Lock()
				acked[id] = name
				mu.Unlock()
				if count.Add(1) == killAfter {
					once.Do(func() {
						close(killed) // before the kill, so no worker mistakes it for a bug
						first.kill()
					})
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("submitted and killed at %v", time.Since(t0))
	if t.Failed() {
		t.Fatalf("controller output:\n%s", first.logs)
	}

	second := startChild(t, bin, cfg, addrFile)
	t.Logf("restarted at %v", time.Since(t0))
	admin, err := client.Dial(ctx, second.addr, token("root", auth.RoleAdmin))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	jobs, err := admin.ListJobs(ctx, &pb.ListJobsRequest{AllStates: true})
	if err != nil {
		t.Fatal(err)
	}
	viaHTTP := 0
	for _, name := range acked {
		var w, i int
		if _, err := fmt.Sscanf(name, "w%d-%d", &w, &i); err == nil && w%2 == 1 {
			viaHTTP++
		}
	}
	if viaHTTP == 0 || viaHTTP == len(acked) {
		t.Fatalf("%d of %d acknowledged jobs came over HTTP; want both kinds", viaHTTP, len(acked))
	}
	found := map[uint64]string{}
	var maxID uint64
	for _, j := range jobs {
		found[j.GetId()] = j.GetSpec().GetName()
		maxID = max(maxID, j.GetId())
	}
	lost := 0
	for id, name := range acked {
		if found[id] != name {
			lost++
			if lost < 5 {
				t.Errorf("acknowledged job %d (%s) came back as %q", id, name, found[id])
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged jobs lost", lost, len(acked))
	}
	t.Logf("%d acknowledged, %d in the store after SIGKILL and restart", len(acked), len(jobs))
	id, err := client.New(admin.Conn()).Submit(ctx, &pb.JobSpec{Name: "after", Script: "#!/bin/sh\n"})
	if err != nil || id <= maxID {
		t.Fatalf("id after restart %d (max before %d): %v", id, maxID, err)
	}
}
