package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/store"
)

const stepsLab = `name: steps
seed: 3
nodes:
  - names: h100-[1-2]
    template: dgx-h100
    features: [h100]
partitions:
  - name: gpu
    nodes: h100-[1-2]
    default: true
    maxTime: "1:00:00"
`

// stepLab is a two-node lab with real agents and real launch, and a
// client acting as nobody.
type stepLab struct {
	t    *testing.T
	c    *Cluster
	cl   *client.Client
	work string
}

func upStepLab(t *testing.T) *stepLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: lab agents need root to run jobs as their owner")
	}
	lab, err := labfile.Parse("steps", []byte(stepsLab))
	if err != nil {
		t.Fatal(err)
	}
	// The lab's daemons live as long as this context: it ends with the test.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := Up(ctx, Options{Lab: lab, Dir: dir, Shim: testShim(t), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Down(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	cl, err := c.Client(context.Background(), "nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(dir), dir, work} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	return &stepLab{t: t, c: c, cl: cl, work: work}
}

// allocate submits a job on both nodes with two GPUs each and waits
// until it runs.
func (l *stepLab) allocate(interactive bool) uint64 {
	l.t.Helper()
	id := l.submit(interactive, 600)
	l.waitState(id, "RUNNING")
	return id
}

// submit queues a job on both nodes with two GPUs each.
func (l *stepLab) submit(interactive bool, limit int64) uint64 {
	l.t.Helper()
	spec := &pb.JobSpec{Name: "steps", Account: ExemptAccount, Partition: "gpu", Nodes: 2, Ntasks: 2, TimeLimitSeconds: limit, MemPerNodeMb: 512,
		Script: "#!/bin/sh\nsleep 600\n", Workdir: l.work, Interactive: interactive,
		Gres: api.GRESToProto(gres.JobRequest{PerNode: gres.Requests{{Name: "gpu", Type: "h100", Count: 2}}})}
	id, err := l.cl.Submit(context.Background(), spec)
	if err != nil {
		l.t.Fatalf("submit: %v", err)
	}
	return id
}

func (l *stepLab) waitState(id uint64, want string) *pb.Job {
	l.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		j, err := l.cl.GetJob(context.Background(), id, false)
		if err == nil && j.GetState() == want {
			return j
		}
		if time.Now().After(deadline) {
			ex, _ := l.cl.ExplainJob(context.Background(), id, false)
			l.t.Logf("explain: %v", ex)
			l.t.Fatalf("job %d is %s (%s: %s; %v), want %s", id, j.GetState(), j.GetReason(), j.GetReasonDetail(), err, want)
		}
		time.Sleep(50 * time.Millisecond) // polling the controller, bounded by the deadline
	}
}

// stepRun is what srun saw of one step.
type stepRun struct {
	started *pb.StepEvent
	lines   map[uint32][]string
	exits   map[uint32]*pb.StepEvent
	end     *pb.StepEvent
}

// runStep runs a step to its end and collects its events.
func (l *stepLab) runStep(req *pb.StepRequest) stepRun {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := l.cl.RunStep(ctx, req)
	if err != nil {
		l.t.Fatal(err)
	}
	run := stepRun{lines: map[uint32][]string{}, exits: map[uint32]*pb.StepEvent{}}
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			l.t.Fatalf("step stream: %v", err)
		}
		switch ev.GetKind() {
		case "started":
			run.started = ev
		case "output":
			run.lines[ev.GetTask()] = append(run.lines[ev.GetTask()], strings.TrimRight(string(ev.GetData()), "\n"))
		case "exit":
			run.exits[ev.GetTask()] = ev
		case "end":
			run.end = ev
		case "error":
			l.t.Errorf("step error on %s: %s", ev.GetNode(), ev.GetReason())
		}
	}
	if run.end == nil {
		l.t.Fatal("the step stream ended without an end event")
	}
	return run
}

// A step runs one task per GPU across both nodes of the allocation, each
// with its rank, node and step environment and bound to its own GPU, inside a step cgroup nested
// in the job's, seeing only its GPUs; srun gets the highest exit code,
// and the job's record lists the step.
func TestStepRunsTasksAcrossTheAllocation(t *testing.T) {
	l := upStepLab(t)
	id := l.allocate(false)
	script := `echo "rank=$SLURM_PROCID local=$SLURM_LOCALID node=$SLURM_NODEID ntasks=$SLURM_NTASKS step=$SLURM_STEP_ID host=$SLURMD_NODENAME nodes=$SLURM_STEP_NODELIST gpus=$CUDA_VISIBLE_DEVICES"
grep -E ':devices:|^0::' /proc/self/cgroup | head -1
exit $SLURM_PROCID`
	run := l.runStep(&pb.StepRequest{JobId: id, Argv: []string{"/bin/sh", "-c", script}, Ntasks: 4, GpusPerTask: 1,
		Env: map[string]string{"PATH": "/usr/bin:/bin"}})
	if got := run.started.GetNodes(); !slices.Equal(got, []string{"h100-1", "h100-2"}) || run.started.GetStepId() != 0 {
		t.Errorf("started on %v as step %d, want both nodes as step 0", got, run.started.GetStepId())
	}
	for rank := range uint32(4) {
		lines := run.lines[rank]
		if len(lines) < 1 {
			t.Fatalf("task %d printed nothing; all output: %v", rank, run.lines)
		}
		node := rank / 2
		// --gpus-per-task binds each task to its own GPU, the only one
		// its task group lets it see, so CUDA numbers it 0.
		want := fmt.Sprintf("rank=%d local=%d node=%d ntasks=4 step=0 host=h100-%d nodes=h100-[1-2] gpus=0", rank, rank%2, node, node+1)
		if lines[0] != want {
			t.Errorf("task %d env line\n got %q\nwant %q", rank, lines[0], want)
		}
		if l.c.Isolation {
			if len(lines) < 2 || !strings.Contains(lines[1], fmt.Sprintf("/job_%d/step_0/task_%d", id, rank)) {
				t.Errorf("task %d is not in the step's group under the job's: %v", rank, lines)
			}
		}
		if e := run.exits[rank]; e == nil || e.GetExitCode() != int32(rank) {
			t.Errorf("task %d exit %v, want %d", rank, e, rank)
		}
	}
	if run.end.GetExitCode() != 3 || run.end.GetState() != "FAILED" {
		t.Errorf("step end %v, want FAILED with the highest exit code 3", run.end)
	}
	ok := l.runStep(&pb.StepRequest{JobId: id, Argv: []string{"true"}, Nodes: 1, Env: map[string]string{"PATH": "/usr/bin:/bin"}})
	if ok.end.GetState() != "COMPLETED" || ok.end.GetStepId() != 1 || !slices.Equal(ok.started.GetNodes(), []string{"h100-1"}) {
		t.Errorf("second step: started %v, end %v; want step 1 on h100-1 COMPLETED", ok.started, ok.end)
	}
	j, err := l.cl.GetJob(context.Background(), id, false)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, s := range j.GetSteps() {
		states = append(states, fmt.Sprintf("%d:%s:%d", s.GetId(), s.GetState(), s.GetExitCode()))
	}
	if want := []string{"0:FAILED:3", "1:COMPLETED:0"}; !slices.Equal(states, want) {
		t.Errorf("job steps %v, want %v", states, want)
	}
	// The batch step's line is there too, while the job runs (sacct's JOBID.batch).
	l.waitLedgerSteps(id, []string{"0:FAILED:3", "1:COMPLETED:0", "batch:RUNNING:0"})
	if _, err := l.cl.EndAllocation(context.Background(), id, 0, 0); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("EndAllocation of a batch job: %v, want FailedPrecondition", err)
	}
	for name, req := range map[string]*pb.StepRequest{
		"no command":  {JobId: id},
		"too many":    {JobId: id, Argv: []string{"true"}, Nodes: 3},
		"unknown job": {JobId: id + 100, Argv: []string{"true"}},
	} {
		stream, err := l.cl.RunStep(context.Background(), req)
		if err == nil {
			_, err = stream.Recv()
		}
		if err == nil || status.Code(err) == codes.OK {
			t.Errorf("%s: step accepted", name)
		}
	}
	if _, err := l.cl.CancelJob(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	l.waitState(id, "CANCELLED")
	// sacct's DerivedExitCode: the highest exit of the job's steps.
	l.waitLedgerDerived(id, "3:0")
}

// waitLedgerDerived waits until the ledger's allocation line of the job
// has ended with DerivedExitCode want ("code:signal").
func (l *stepLab) waitLedgerDerived(id uint64, want string) {
	l.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		db, err := store.OpenSQLite(ctx, l.c.LedgerPath, store.Options{ReadOnly: true})
		if err != nil {
			l.t.Fatal(err)
		}
		recs, err := db.Query(ctx, accounting.Filter{AllocationsOnly: true})
		db.Close()
		got := ""
		for _, r := range recs {
			if r.JobID == id && r.State.Ended() {
				got = fmt.Sprintf("%d:%d", r.DerivedExitCode, r.DerivedSignal)
			}
		}
		if err == nil && got == want {
			return
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("ledger allocation line of job %d: DerivedExitCode %q (%v), want %s", id, got, err, want)
		}
		time.Sleep(50 * time.Millisecond) // polling the ledger writer, bounded by the deadline
	}
}

// waitLedgerSteps waits until the accounting ledger holds the job's step
// lines (sacct's JOBID.N) as "step:state:exit".
func (l *stepLab) waitLedgerSteps(id uint64, want []string) {
	l.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got []string
		db, err := store.OpenSQLite(ctx, l.c.LedgerPath, store.Options{ReadOnly: true})
		if err != nil {
			l.t.Fatal(err)
		}
		recs, err := db.Query(ctx, accounting.Filter{})
		db.Close()
		for _, r := range recs {
			if r.JobID == id && r.Step != "" {
				got = append(got, fmt.Sprintf("%s:%s:%d", r.Step, r.State, r.ExitCode))
			}
		}
		sort.Strings(got)
		if err == nil && slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("ledger step lines of job %d: %v (%v), want %v", id, got, err, want)
		}
		time.Sleep(50 * time.Millisecond) // polling the ledger writer, bounded by the deadline
	}
}

// A step sees only its own GPUs: with one GPU per node, the job's other
// GPU is denied inside the step (EPERM) while its own opens (ENXIO: no
// driver behind the simulated node).
func TestStepDevicesAreASubsetOfTheJobs(t *testing.T) {
	l := upStepLab(t)
	if !l.c.Isolation {
		t.Skipf("skipped: jobs run without cgroups here (%s)", l.c.IsolationOf)
	}
	id := l.allocate(false)
	j, err := l.cl.GetJob(context.Background(), id, false)
	if err != nil {
		t.Fatal(err)
	}
	node, _ := l.c.Node(j.GetAlloc()[0].GetNode())
	var paths []string
	for _, u := range j.GetAlloc()[0].GetDevices() {
		d, _ := node.Inventory.Device(u)
		paths = append(paths, d.Files[0].Path)
	}
	sort.Strings(paths)
	script := `for f in "$@"; do if (exec 3<"$f") 2>/dev/null; then echo "$f open"; else (exec 3<"$f") 2>&1 | grep -o -E 'not permitted|No such device' | sed "s|^|$f |"; fi; done`
	run := l.runStep(&pb.StepRequest{JobId: id, Nodes: 1, GpusPerNode: 1, Env: map[string]string{"PATH": "/usr/bin:/bin"},
		Argv: append([]string{"/bin/sh", "-c", script, "probe"}, paths...)})
	got := strings.Join(run.lines[0], "\n")
	if !strings.Contains(got, paths[0]+" No such device") || !strings.Contains(got, paths[1]+" not permitted") {
		t.Errorf("device probe in a 1-GPU step:\n%s\nwant %s allowed (ENXIO) and %s denied (EPERM)", got, paths[0], paths[1])
	}
	// Bound tasks see only their own GPU.
	bound := l.runStep(&pb.StepRequest{JobId: id, Nodes: 1, Ntasks: 2, GpusPerTask: 1, Env: map[string]string{"PATH": "/usr/bin:/bin"},
		Argv: append([]string{"/bin/sh", "-c", script, "probe"}, paths...)})
	for task, own := range []int{0, 1} {
		got := strings.Join(bound.lines[uint32(task)], "\n")
		other := paths[1-own]
		if !strings.Contains(got, paths[own]+" No such device") || !strings.Contains(got, other+" not permitted") {
			t.Errorf("task %d bound to %s:\n%s\nwant its GPU allowed and %s denied", task, paths[own], got, other)
		}
	}
	l.cl.CancelJob(context.Background(), id)
}

// srun going away cancels its step: the tasks are killed and the step is
// recorded CANCELLED; ending an interactive allocation completes the job.
func TestStepCancelledWhenSrunGoesAwayAndInteractiveEnd(t *testing.T) {
	l := upStepLab(t)
	id := l.allocate(true)
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := l.cl.RunStep(ctx, &pb.StepRequest{JobId: id, Argv: []string{"/bin/sh", "-c", "echo up; exec sleep 6071"},
		Env: map[string]string{"PATH": "/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for seen < 2 {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("before both tasks printed: %v", err)
		}
		if ev.GetKind() == "output" {
			seen++
		}
	}
	cancel()
	deadline := time.Now().Add(time.Minute)
	for {
		j, err := l.cl.GetJob(context.Background(), id, false)
		if err == nil && len(j.GetSteps()) == 1 && j.GetSteps()[0].GetState() == "CANCELLED" && stepsIdle() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("step not cancelled and gone: %v", j.GetSteps())
		}
		time.Sleep(50 * time.Millisecond) // polling the controller and agents, bounded by the deadline
	}
	run := l.runStep(&pb.StepRequest{JobId: id, Argv: []string{"echo", "again"}, Ntasks: 1})
	if run.end.GetState() != "COMPLETED" || len(run.lines[0]) != 1 || run.lines[0][0] != "again" {
		t.Errorf("step after the cancelled one: %v %v", run.lines, run.end)
	}
	j, err := l.cl.EndAllocation(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if j.GetState() != "COMPLETED" {
		t.Errorf("interactive job ended %s, want COMPLETED", j.GetState())
	}
	// No batch step enforces an interactive job's time limit: the
	// controller does.
	short := l.submit(true, 2)
	l.waitState(short, "RUNNING")
	if j := l.waitState(short, "TIMEOUT"); j.GetReason() != "TimeLimit" {
		t.Errorf("interactive job past its limit: %s (%s)", j.GetState(), j.GetReason())
	}
}

// stepsIdle reports whether the step's "sleep 6071" is gone from this
// host (a duration no other test uses).
func stepsIdle() bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(b) == "sleep\x006071\x00" {
			return false
		}
	}
	return true
}

// Cancelling the job kills its running steps (srun sees the tasks end by
// SIGTERM and the step recorded CANCELLED), and a step's processes are
// bound by the job's memory limit: the job group's, which holds them.
func TestJobCancelEndsStepsAndJobLimitsBindThem(t *testing.T) {
	l := upStepLab(t)
	if !l.c.Isolation {
		t.Skipf("skipped: jobs run without cgroups here (%s)", l.c.IsolationOf)
	}
	id := l.allocate(false)
	// tail keeps a line without a newline in memory: 1 GiB of zeros
	// overruns the job's 512 MiB on the node.
	hog := l.runStep(&pb.StepRequest{JobId: id, Nodes: 1, Argv: []string{"/bin/sh", "-c", "head -c 1G /dev/zero | tail -n 1 >/dev/null"},
		Env: map[string]string{"PATH": "/usr/bin:/bin"}})
	if hog.end.GetState() != "FAILED" || (hog.end.GetExitCode() != 128+9 && hog.end.GetSignal() != 9) {
		t.Errorf("a step over the job's memory limit ended %v, want FAILED by SIGKILL (the OOM killer)", hog.end)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := l.cl.RunStep(ctx, &pb.StepRequest{JobId: id, Argv: []string{"/bin/sh", "-c", "echo up; exec sleep 6071"},
		Env: map[string]string{"PATH": "/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	var end *pb.StepEvent
	cancelled := false
	for end == nil {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("step stream: %v", err)
		}
		switch ev.GetKind() {
		case "output":
			if !cancelled {
				if _, err := l.cl.CancelJob(context.Background(), id); err != nil {
					t.Fatal(err)
				}
				cancelled = true
			}
		case "end":
			end = ev
		}
	}
	if end.GetState() != "CANCELLED" || end.GetSignal() != 15 {
		t.Errorf("step of a cancelled job ended %v, want CANCELLED by signal 15", end)
	}
	if !stepsIdle() {
		t.Error("the step's sleep survived the job's cancel")
	}
	j := l.waitState(id, "CANCELLED")
	if n := len(j.GetSteps()); n != 2 || j.GetSteps()[1].GetState() != "CANCELLED" {
		t.Errorf("job steps after cancel: %v", j.GetSteps())
	}
}
