package userverbs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
)

// reclaimCluster reclaims quickly and schedules and maintains every 20 ms
// of real time, so the test only moves the fake clock and polls.
const reclaimCluster = e2eCluster + `scheduler:
  interval: 20ms
  minInterval: 1ms
reclamation:
  dryRun: false
  idleFor: 2m
  grace: 1m
  minRuntime: 0s
  maxSampleGap: 1h
`

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// startReclaimCluster is startCLICluster with the scheduling loop on and a
// fake clock the test moves.
func startReclaimCluster(t *testing.T) (*cliCluster, *testClock) {
	t.Helper()
	cfg, err := config.Parse("reclaim.yaml", []byte(reclaimCluster))
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{t: testNow}
	c, err := controller.New(controller.Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: t.TempDir(), MetricsAddr: "off",
		Now: clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &cliCluster{t: t, c: c, dir: t.TempDir()}, clock
}

// runReportCLI runs `parity report ...` with the reclaim subcommand on env.
func runReportCLI(env userEnv, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	root := testRoot(env, &out, &errb)
	report := &cobra.Command{Use: "report"}
	report.AddCommand(newReportReclaimCmdWith(env))
	root.AddCommand(report)
	root.SetArgs(append([]string{"report"}, args...))
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(&errb, "parity:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return out.String(), errb.String(), ee.code
		}
		return out.String(), errb.String(), 1
	}
	return out.String(), errb.String(), 0
}

// pollJob polls the job until ok accepts it or 10 s pass.
func pollJob(t *testing.T, c *client.Client, id uint64, what string, ok func(*pb.Job) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		j, err := c.GetJob(context.Background(), id, false)
		if err != nil {
			t.Fatal(err)
		}
		if ok(j) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d never %s: %v", id, what, j)
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
}

func TestReportReclaim(t *testing.T) {
	cl, clock := startReclaimCluster(t)
	cl.register("n1", 4)
	ctx := context.Background()
	agent, err := client.Dial(ctx, cl.c.Addr(), cl.token("n1", auth.RoleAgent, "n1"))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	admin, err := client.Dial(ctx, cl.c.Addr(), cl.token("root", auth.RoleAdmin, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var running []uint64
	beat := func() {
		t.Helper()
		req := &pb.HeartbeatRequest{Node: "n1"}
		for i := range 4 {
			req.Samples = append(req.Samples, api.SampleToProto(gres.Sample{UUID: fmt.Sprintf("GPU-n1-%d", i), Time: clock.Now(),
				UtilizationPct: 0, TemperatureC: 40, PowerW: 60}))
		}
		for _, id := range running {
			req.Running = append(req.Running, &pb.RunningJob{JobId: id})
		}
		if _, err := agent.Heartbeat(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	alice := cl.as("alice", nil)
	beat()
	out := cl.ok(alice, "sbatch", "--gres=gpu:1", "-t", "10", "--wrap", "sleep 600")
	var id uint64
	if _, err := fmt.Sscanf(out, "Submitted batch job %d", &id); err != nil {
		t.Fatalf("sbatch said %q", out)
	}
	pollJob(t, admin, id, "started", func(j *pb.Job) bool { return j.GetState() == "RUNNING" })
	running = []uint64{id}
	beat()
	// Idle from its first sample: warned once idleFor (2m) has passed…
	for range 2 {
		clock.Advance(90 * time.Second)
		beat()
	}
	pollJob(t, admin, id, "warned", func(j *pb.Job) bool { return j.GetReason() == controller.ReasonIdleGPU })
	// …and reclaimed a grace (1m) later.
	clock.Advance(70 * time.Second)
	beat()
	pollJob(t, admin, id, "reclaimed", func(j *pb.Job) bool { return j.GetState() != "RUNNING" })
	// The report reads the decision log, which a state change reaches once
	// its commit is done: wait for the reclaim there too.
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs, err := admin.Events(ctx, &pb.EventsRequest{JobId: id, Kinds: []string{controller.EventReclaim}})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(evs, func(ev *pb.Event) bool { return ev.GetFields()["action"] == "reclaim" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d: no reclaim in the decision log: %v", id, evs)
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}

	root := cl.as("root", nil)
	window := []string{"reclaim", "-S", "2025-06-02T00:00", "-E", "2025-06-03T00:00"}
	run := func(env userEnv, extra ...string) string {
		t.Helper()
		out, errs, code := runReportCLI(env, append(window, extra...)...)
		if code != 0 {
			t.Fatalf("report %q: exit %d\n%s", extra, code, errs)
		}
		return out
	}
	table := run(root)
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "2025-06-02T00:00:00 - 2025-06-03T00:00:00") ||
		strings.Join(strings.Fields(lines[1]), " ") != "Account User Jobs Warnings IdleGPUHours FreedGPUHours DryRunJobs" {
		t.Fatalf("table:\n%s", table)
	}
	// One GPU idle from 09:00 to its reclamation at 09:04:10 (≈0.07 h);
	// 10 minutes of limit minus the 4m10s it ran are freed (≈0.10 h).
	if got := strings.Join(strings.Fields(lines[2]), " "); got != "physics 1 1 0.07 0.10 0" {
		t.Errorf("account row %q", got)
	}
	if got := strings.Join(strings.Fields(lines[3]), " "); got != "physics alice 1 1 0.07 0.10 0" {
		t.Errorf("user row %q", got)
	}
	if got := run(root, "--parsable2", "--noheader"); got != "physics||1|1|0.07|0.10|0\nphysics|alice|1|1|0.07|0.10|0\n" {
		t.Errorf("--parsable2:\n%s", got)
	}
	if got := run(root, "--csv"); !strings.HasPrefix(got, "Account,User,Jobs,Warnings,IdleGPUHours,FreedGPUHours,DryRunJobs\nphysics,,1,1,0.07,0.10,0\n") {
		t.Errorf("--csv:\n%s", got)
	}
	var js struct {
		Accounts []struct {
			Account      string  `json:"account"`
			Jobs         int     `json:"jobs"`
			IdleGPUHours float64 `json:"idleGpuHours"`
		} `json:"accounts"`
		Users []struct {
			User string `json:"user"`
		} `json:"users"`
	}
	if err := json.Unmarshal([]byte(run(root, "--json")), &js); err != nil || len(js.Accounts) != 1 || js.Accounts[0].Jobs != 1 ||
		js.Accounts[0].IdleGPUHours < 0.069 || js.Accounts[0].IdleGPUHours > 0.07 || len(js.Users) != 1 || js.Users[0].User != "alice" {
		t.Errorf("--json = %+v, %v", js, err)
	}
	// sreport's start=/end= words; a window before the reclamation is empty.
	if got := rows(run(root, "start=2025-06-01", "end=2025-06-02")); len(got) != 1 { // the header only
		t.Errorf("empty window rows %q", got)
	}
	// bob sees only his own jobs' reclamations: none.
	if got := strings.Split(strings.TrimRight(run(cl.as("bob", nil)), "\n"), "\n"); len(got) != 2 {
		t.Errorf("bob's report %q", got)
	}
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"reclaim", "-S", "soonish"}, `--start="soonish"`},
		{[]string{"reclaim", "-S", "2025-06-03", "-E", "2025-06-02"}, "is not after start"},
		{[]string{"reclaim", "topcount=3"}, `unknown argument "topcount=3"`},
		{[]string{"reclaim", "--csv", "--parsable2"}, "exclude each other"},
	} {
		if _, errs, code := runReportCLI(root, tc.args...); code != 1 || !strings.Contains(errs, tc.mention) {
			t.Errorf("%q: exit %d, stderr %q, want a mention of %s", tc.args, code, errs, tc.mention)
		}
	}
}
