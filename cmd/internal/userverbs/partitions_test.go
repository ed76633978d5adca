package userverbs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
)

// multiPartCluster has two one-node partitions and a short one, and
// schedules every 20 ms of real time (the test polls).
const multiPartCluster = `
cluster: cli
admins: [root]
partitions:
  - name: a
    nodes: n1
    default: true
  - name: b
    nodes: n2
  - name: short
    nodes: n[1-2]
    maxTime: "5"
nodes:
  - names: n[1-2]
    gpus: 4
    gpuType: h100
accounts:
  - name: physics
    users: [alice]
scheduler:
  interval: 20ms
  minInterval: 1ms
`

func startMultiPartCluster(t *testing.T) *cliCluster {
	t.Helper()
	cfg, err := config.Parse("multi.yaml", []byte(multiPartCluster))
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
	return &cliCluster{t: t, c: c, dir: t.TempDir()}
}

// sbatch -p a,b while a is full: squeue and scontrol show a,b while the
// job pends, and b once it runs there; a partition it can never run in
// is dropped with a warning.
func TestSubmitToSeveralPartitions(t *testing.T) {
	cl := startMultiPartCluster(t)
	cl.register("n1", 4)
	cl.register("n2", 4)
	admin, err := client.Dial(context.Background(), cl.c.Addr(), cl.token("root", auth.RoleAdmin, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	alice := cl.as("alice", nil)
	submit := func(args ...string) uint64 {
		t.Helper()
		out := cl.ok(alice, append([]string{"sbatch", "--parsable"}, args...)...)
		var id uint64
		if _, err := fmt.Sscanf(out, "%d", &id); err != nil {
			t.Fatalf("sbatch --parsable said %q", out)
		}
		return id
	}
	filler := submit("-p", "a", "--gres=gpu:4", "-t", "10", "--wrap", "sleep 600")
	pollJob(t, admin, filler, "started in a", func(j *pb.Job) bool { return j.GetState() == "RUNNING" && j.GetPartition() == "a" })

	id := submit("-p", "a,b", "--gres=gpu:4", "-t", "10", "--hold", "--wrap", "sleep 600")
	ids := fmt.Sprint(id)
	if got := strings.TrimSpace(cl.ok(alice, "squeue", "-h", "-j", ids, "-o", "%P %t")); got != "a,b PD" {
		t.Errorf("squeue of the pending job: %q, want \"a,b PD\"", got)
	}
	if out := cl.ok(alice, "scontrol", "show", "job", ids); !strings.Contains(out, "Partition=a,b") {
		t.Errorf("scontrol show job lacks Partition=a,b:\n%s", out)
	}
	cl.ok(alice, "scontrol", "release", ids)
	pollJob(t, admin, id, "started in b", func(j *pb.Job) bool { return j.GetState() == "RUNNING" })
	if got := strings.TrimSpace(cl.ok(alice, "squeue", "-h", "-j", ids, "-o", "%P %t %N")); got != "b R n2" {
		t.Errorf("squeue of the running job: %q, want \"b R n2\"", got)
	}
	if out := cl.ok(alice, "scontrol", "show", "job", ids); !strings.Contains(out, "Partition=b ") && !strings.Contains(out, "Partition=b\n") {
		t.Errorf("scontrol show job lacks Partition=b:\n%s", out)
	}

	// Both full now: a third job pends in both, and explain says why per partition.
	third := submit("-p", "a,b", "--gres=gpu:4", "-t", "10", "--wrap", "sleep 600")
	pollJob(t, admin, third, "pending for resources", func(j *pb.Job) bool { return j.GetReason() == "Resources" })
	if got := strings.TrimSpace(cl.ok(alice, "squeue", "-h", "-j", fmt.Sprint(third), "-o", "%P %t %r")); got != "a,b PD Resources" {
		t.Errorf("squeue of the waiting job: %q, want \"a,b PD Resources\"", got)
	}
	ex := cl.ok(alice, "parity", "explain", fmt.Sprint(third))
	for _, want := range []string{"Partitions:", "a: Resources", "b: Resources"} {
		if !strings.Contains(ex, want) {
			t.Errorf("explain lacks %q:\n%s", want, ex)
		}
	}

	out, errs, code := runCLI(alice, "sbatch", "-p", "short,b", "-t", "10", "--hold", "--wrap", "x")
	if code != 0 || !strings.Contains(errs, "warning: partition short dropped: --time=00:10:00") || !strings.HasPrefix(out, "Submitted batch job ") {
		t.Errorf("sbatch -p short,b -t 10: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	cl.fails(alice, 1, []string{"sbatch", "-p", "short,a", "-t", "10", "-N", "2", "--wrap", "x"},
		"--partition=short,a: the job fits none of its partitions")
}
