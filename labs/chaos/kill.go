package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
)

// killLab is the lab of the kill scenario: finished jobs stay in memory
// long enough for a trial to look each acknowledged one up, and not so
// long that many trials' jobs fill MaxJobCount.
func killLab() labOptions {
	return labOptions{name: "kill", config: map[string]string{"minJobAge": "8s"}}
}

// killTally is what the trials found, summed.
type killTally struct {
	trials, acked, lost, reused, shared int
	restarts                            []time.Duration
	seen                                map[uint64]string // every acknowledged id → its job's name
}

// ack is one acknowledged submission: the id and the name it was sent with.
type ack struct {
	id   uint64
	name string
}

// runKill kills the controller with SIGKILL at a random (seeded) moment
// of a submission stream, Trials times, restarts it on the same state
// directory, and checks every acknowledged id, the ids' uniqueness and
// the GPUs' holders.
func runKill(ctx context.Context, l *lab, o *Options) []Row {
	row := Row{Scenario: "controller kill -9 during a submission stream", Cases: o.Trials}
	lockDir := filepath.Join(l.dir, "gpulocks")
	if err := os.MkdirAll(lockDir, 0o755); err != nil {
		row.fail("%v", err)
		return []Row{row}
	}
	t := &killTally{seen: map[uint64]string{}}
	for i := 0; i < o.Trials; i++ {
		if err := killTrial(ctx, l, o, i, lockDir, t, &row); err != nil {
			row.fail("trial %d: %v", i+1, err)
			break
		}
		t.trials++
		o.progressf("kill: trial %d/%d: %s acknowledged so far, %d lost, %d reused, %d double-allocated",
			i+1, o.Trials, count(t.acked), t.lost, t.reused, t.shared+len(lockConflicts(lockDir)))
	}
	// The GPU jobs' locks count every overlap of every trial, the last
	// trial's jobs included once they have all ended.
	if err := l.cancelAll(ctx, time.Minute); err != nil {
		row.fail("%v", err)
	}
	conflicts := lockConflicts(lockDir)
	t.shared += len(conflicts)
	for _, c := range conflicts {
		row.fail("%s", c)
	}
	row.Cases = t.trials
	row.add("acknowledged", count(t.acked))
	row.add("lost", t.lost)
	row.add("reused", t.reused)
	row.add("double-allocated", t.shared)
	if len(t.restarts) > 0 {
		slices.Sort(t.restarts)
		row.add("restart (median)", secs(t.restarts[len(t.restarts)/2]))
	}
	return []Row{row}
}

// killTrial runs one trial: the stream, the kill, the restart, the checks.
func killTrial(ctx context.Context, l *lab, o *Options, trial int, lockDir string, t *killTally, row *Row) error {
	rng := rand.New(rand.NewPCG(uint64(o.Seed), uint64(trial)))
	killAfter := 300*time.Millisecond + time.Duration(rng.Int64N(int64(1200*time.Millisecond)))
	s := &stream{}
	var wg sync.WaitGroup
	for g := 0; g < o.Streams; g++ {
		wg.Add(1)
		go func() { defer wg.Done(); s.held(ctx, l, trial, g) }()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.gpu(ctx, l, trial, lockDir, rand.New(rand.NewPCG(uint64(o.Seed), uint64(trial)+1<<32)))
	}()
	if err := clientenv.Sleep(ctx, killAfter); err != nil {
		s.killed.Store(true)
		wg.Wait()
		return err
	}
	s.killed.Store(true)
	if err := l.ctl.kill(ctx, syscall.SIGKILL); err != nil {
		wg.Wait()
		return err
	}
	killedAt := time.Now()
	wg.Wait()
	drained := time.Since(killedAt)
	took, err := l.startController(ctx)
	if err != nil {
		return err
	}
	t.restarts = append(t.restarts, took)
	for _, e := range s.errs {
		row.warn("trial %d: refused before the kill: %s", trial+1, e)
	}
	restarted := time.Now()
	lost, reused, err := checkAcked(ctx, l, s.acked, t.seen)
	t.acked += len(s.acked)
	t.lost += len(lost)
	t.reused += len(reused)
	for _, n := range append(lost, reused...) {
		row.fail("trial %d: %s", trial+1, n)
	}
	if err != nil {
		return err
	}
	checked := time.Now()
	if err := l.waitNodes(ctx, time.Minute); err != nil {
		return err
	}
	nodesBack := time.Now()
	shared, err := checkHoldings(ctx, l, lockDir)
	t.shared += len(shared)
	for _, n := range shared {
		row.fail("trial %d: %s", trial+1, n)
	}
	if err != nil {
		return err
	}
	held := time.Now()
	// The held jobs go, so trials do not fill MaxJobCount; the GPU jobs
	// end by themselves in seconds, and the next trial's run beside them
	// (their locks still tell an overlap).
	err = l.cancelUsers(ctx, userAlice)
	l.log.Info("kill trial", "trial", trial+1, "acked", len(s.acked), "kill_after", killAfter, "drain", drained, "restart", took,
		"check", checked.Sub(restarted), "nodes_back", nodesBack.Sub(checked), "holdings", held.Sub(nodesBack), "cancel", time.Since(held))
	return err
}

// stream is one trial's submitters: what they were acknowledged and the
// refusals they met before the kill.
type stream struct {
	killed atomic.Bool
	mu     sync.Mutex
	acked  []ack
	errs   []string
}

func (s *stream) record(id uint64, name string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil:
		s.acked = append(s.acked, ack{id: id, name: name})
	case !s.killed.Load() && len(s.errs) < 5:
		s.errs = append(s.errs, err.Error())
	}
}

// held submits held jobs (they never run) as fast as the controller
// takes them, until the kill.
func (s *stream) held(ctx context.Context, l *lab, trial, g int) {
	cl, err := l.client(ctx, userAlice, auth.RoleUser)
	if err != nil {
		s.record(0, "", err)
		return
	}
	defer cl.Close()
	for n := 0; !s.killed.Load(); n++ {
		name := fmt.Sprintf("chaos-t%d-s%d-%d", trial, g, n)
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		id, err := cl.Submit(cctx, heldSpec(name))
		cancel()
		s.record(id, name, err)
		if err != nil && !s.killed.Load() {
			_ = clientenv.Sleep(ctx, 50*time.Millisecond)
		}
	}
}

// gpu submits short GPU jobs (1 to 4 GPUs, 1 to 3 seconds) that run
// while the stream goes on, so the kill finds GPUs allocated.
func (s *stream) gpu(ctx context.Context, l *lab, trial int, lockDir string, rng *rand.Rand) {
	cl, err := l.client(ctx, "root", auth.RoleAdmin)
	if err != nil {
		s.record(0, "", err)
		return
	}
	defer cl.Close()
	for n := 0; n < 20 && !s.killed.Load(); n++ {
		name := fmt.Sprintf("chaos-t%d-gpu-%d", trial, n)
		spec := gpuSpec(name, lockDir, 1+rng.IntN(4), 1+rng.IntN(3))
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		id, err := cl.Submit(cctx, spec)
		cancel()
		s.record(id, name, err)
		_ = clientenv.Sleep(ctx, 100*time.Millisecond)
	}
}

// checkAcked looks every acknowledged id up after the restart: missing
// is lost; another job's name under it, or an id acknowledged before, is
// an id handed out twice.
func checkAcked(ctx context.Context, l *lab, acked []ack, seen map[uint64]string) (lost, reused []string, err error) {
	var mu sync.Mutex
	var errs []error
	for _, a := range acked {
		if prev, ok := seen[a.id]; ok {
			reused = append(reused, fmt.Sprintf("id %d acknowledged for %s and again for %s", a.id, prev, a.name))
		}
		seen[a.id] = a.name
	}
	parallel(ctx, 8, len(acked), func(i int) {
		a := acked[i]
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		j, gerr := l.admin.GetJob(cctx, a.id, false)
		cancel()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case status.Code(gerr) == codes.NotFound:
			lost = append(lost, fmt.Sprintf("job %d (%s) acknowledged, missing after the restart", a.id, a.name))
		case gerr != nil:
			errs = append(errs, fmt.Errorf("look up job %d: %w", a.id, gerr))
		case j.GetSpec().GetName() != a.name:
			reused = append(reused, fmt.Sprintf("id %d acknowledged for %s is job %q after the restart", a.id, a.name, j.GetSpec().GetName()))
		}
	})
	if len(errs) > 0 {
		err = fmt.Errorf("%d jobs could not be checked, first: %w", len(errs), errs[0])
	}
	return lost, reused, err
}

// checkHoldings looks for a GPU held twice in the controller's view: once
// the nodes are back, and again after a few scheduling passes (the GPU
// jobs' locks are read at the end).
func checkHoldings(ctx context.Context, l *lab, lockDir string) ([]string, error) {
	var found []string
	for pass := 0; pass < 2; pass++ {
		if pass > 0 {
			if err := clientenv.Sleep(ctx, 2*time.Second); err != nil {
				return found, err
			}
		}
		jobs, err := l.admin.ListJobs(ctx, &pb.ListJobsRequest{States: []string{"RUNNING", "COMPLETING", "SUSPENDED"}})
		if err != nil {
			return found, fmt.Errorf("list running jobs: %w", err)
		}
		nodes, err := l.admin.ListNodes(ctx, nil)
		if err != nil {
			return found, fmt.Errorf("list nodes: %w", err)
		}
		for _, s := range sharedGPUs(jobs, nodes) {
			if !slices.Contains(found, s) {
				found = append(found, s)
			}
		}
	}
	return found, nil
}

// heldSpec is a held job: durable state to lose, no work to run.
func heldSpec(name string) *pb.JobSpec {
	return &pb.JobSpec{Name: name, Partition: "cpu", Hold: true, Script: "#!/bin/sh\ntrue\n",
		Output: "/dev/null", Workdir: "/tmp", TimeLimitSeconds: 60}
}

// gpuSpec is a short GPU job on the gpu partition (see gpuScript).
func gpuSpec(name, lockDir string, gpus, seconds int) *pb.JobSpec {
	return &pb.JobSpec{Name: name, Partition: "gpu", Script: gpuScript(lockDir, seconds),
		Gres:       &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Count: int64(gpus)}}},
		GresOption: fmt.Sprintf("gpu:%d", gpus), MemPerNodeMb: 100, TimeLimitSeconds: 120,
		Output: "/dev/null", Workdir: "/tmp", Env: map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}}
}
