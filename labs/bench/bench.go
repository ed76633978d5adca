package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sizes scale the workloads.
type Sizes struct {
	Submits int `json:"submits"` // (a) individual submissions
	Array   int `json:"array"`   // (b) array tasks
	Backlog int `json:"backlog"` // (c, d) mixed backlog jobs
}

// DefaultSizes are the issues' figures.
func DefaultSizes() Sizes { return Sizes{Submits: 500, Array: 1000, Backlog: 5000} }

// validate accepts 0 for a workload to skip (e.g. `--submits 0 --backlog 0`
// to time the array alone), but not all three.
func (s Sizes) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"submits", s.Submits}, {"array", s.Array}, {"backlog", s.Backlog}} {
		if f.v < 0 || f.v > 1_000_000 {
			return fmt.Errorf("bench: --%s %d: want 0 (skip) to 1000000", f.name, f.v)
		}
	}
	if s == (Sizes{}) {
		return fmt.Errorf("bench: --submits, --array and --backlog are all 0: nothing to run")
	}
	return nil
}

// Options say what to run.
type Options struct {
	Sizes  Sizes
	Parity ParityOptions
	// Slurm is nil to leave the Slurm column out; SlurmSkip says why.
	Slurm     *SlurmOptions
	SlurmSkip string
	// Timeout bounds each workload's wait for an empty queue.
	Timeout time.Duration
	// Parallel submission processes for the backlog (default 4).
	Parallel int
	// Progress receives a line per step (nil: quiet).
	Progress io.Writer
	// Now is the clock for the report's date (default time.Now).
	Now func() time.Time
}

// Run runs every workload on Parity, then on Slurm (one at a time, so
// neither competes with the other for the machine), and tabulates them.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.Sizes.validate(); err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	progress := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
		}
	}
	res := &Result{Date: o.Now().UTC().Format(time.RFC3339), Sizes: o.Sizes, LoadBefore: loadAvg()}
	progress("parity: starting the lab")
	ps, err := startParity(ctx, o.Parity)
	if err != nil {
		return nil, err
	}
	res.Lab = ps.c.Lab.Name
	res.ParityFigures = runWorkloads(ctx, ps, o, progress)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	err = ps.close(dctx)
	cancel()
	if err != nil {
		progress("parity: stopping the lab: %v", err)
	}
	switch {
	case ctx.Err() != nil:
		res.SlurmSkipped = "interrupted"
	case o.Slurm == nil:
		res.SlurmSkipped = o.SlurmSkip
		if res.SlurmSkipped == "" {
			res.SlurmSkipped = "no Slurm given"
		}
	default:
		ss, err := startSlurm(ctx, *o.Slurm, progress)
		if err != nil {
			res.SlurmSkipped = err.Error()
			break
		}
		res.SlurmFigures = runWorkloads(ctx, ss, o, progress)
		if err := ss.close(context.WithoutCancel(ctx)); err != nil {
			progress("slurm: stopping: %v", err)
		}
	}
	res.LoadAfter = loadAvg()
	res.Rows = table(res)
	return res, ctx.Err()
}

// Figure is one measured value, or why there is none.
type Figure struct {
	Value float64 `json:"value"`
	Err   string  `json:"error,omitempty"`
	Note  string  `json:"note,omitempty"`
}

// Figure keys.
const (
	keySubmitTime  = "submit_time_s"
	keySubmitRate  = "submit_rate_per_s"
	keySubmitDrain = "submit_drain_s"
	keyArrayDrain  = "array_drain_s"
	keyBacklogSub  = "backlog_submit_s"
	keyBacklogDone = "backlog_drain_s"
	keyPassMean    = "pass_mean_ms"
	keyPassLast    = "pass_last_ms"
)

// common are the sbatch options every bench job carries (throughput.sh's).
var common = []string{"--parsable", "-o", "/dev/null", "-c", "1", "--mem=100"}

func jobArgs(extra ...string) []string {
	return append(append(append([]string{}, common...), extra...), "--wrap=true")
}

// runWorkloads runs (a)–(d) on t; a failed workload leaves its figures
// with the error and the next one still runs.
func runWorkloads(ctx context.Context, t target, o Options, progress func(string, ...any)) map[string]Figure {
	figs := map[string]Figure{}
	fail := func(err error, keys ...string) {
		progress("%s: %v", t.name(), err)
		for _, k := range keys {
			if _, done := figs[k]; !done {
				figs[k] = Figure{Err: err.Error()}
			}
		}
	}
	// (a) Individual submissions, one process each, then the drain.
	n := o.Sizes.Submits
	if n > 0 {
		runSubmits(ctx, t, o, n, figs, fail, progress)
	}
	// (b) One array of 1-GPU `true` tasks, submit to last completion.
	if o.Sizes.Array > 0 {
		runArray(ctx, t, o, figs, fail, progress)
	}
	if o.Sizes.Backlog > 0 {
		runBacklog(ctx, t, o, figs, fail, progress)
	}
	return figs
}

func runSubmits(ctx context.Context, t target, o Options, n int, figs map[string]Figure, fail func(error, ...string), progress func(string, ...any)) {
	progress("%s: (a) %d individual submissions", t.name(), n)
	busy0, ok0 := hostBusy()
	t0 := time.Now()
	err := func() error {
		for range n {
			if _, err := t.submit(ctx, jobArgs("--gres=gpu:h100:1")...); err != nil {
				return err
			}
		}
		sub := time.Since(t0)
		figs[keySubmitTime] = Figure{Value: sub.Seconds(), Note: cpuNote(busy0, ok0, n, "submitting, and running what had started")}
		figs[keySubmitRate] = Figure{Value: float64(n) / sub.Seconds()}
		if err := waitEmpty(ctx, t, o.Timeout); err != nil {
			return err
		}
		figs[keySubmitDrain] = Figure{Value: time.Since(t0).Seconds()}
		return nil
	}()
	if err != nil {
		fail(err, keySubmitTime, keySubmitRate, keySubmitDrain)
	}
}

func runArray(ctx context.Context, t target, o Options, figs map[string]Figure, fail func(error, ...string), progress func(string, ...any)) {
	progress("%s: (b) %d-task array", t.name(), o.Sizes.Array)
	busy0, ok0 := hostBusy()
	t0 := time.Now()
	err := func() error {
		if _, err := t.submit(ctx, jobArgs("--array=1-"+strconv.Itoa(o.Sizes.Array), "--gres=gpu:h100:1")...); err != nil {
			return err
		}
		if err := waitEmpty(ctx, t, o.Timeout); err != nil {
			return err
		}
		figs[keyArrayDrain] = Figure{Value: time.Since(t0).Seconds(), Note: cpuNote(busy0, ok0, o.Sizes.Array, "")}
		return nil
	}()
	if err != nil {
		fail(err, keyArrayDrain)
	}
}

// backlogShapes cycle through 1, 2, 4 and 8 GPUs and 2 × 8 GPUs.
var backlogShapes = [][]string{
	{"--gres=gpu:h100:1"}, {"--gres=gpu:h100:2"}, {"--gres=gpu:h100:1"}, {"--gres=gpu:h100:4"}, {"--gres=gpu:h100:1"},
	{"--gres=gpu:h100:8"}, {"--gres=gpu:h100:1"}, {"--gres=gpu:h100:2"}, {"--gres=gpu:h100:1"}, {"-N", "2", "--gres=gpu:h100:8"},
}

// runBacklog (c, d): a blocker holds every GPU while the mixed backlog is
// submitted, so the whole backlog is pending at once; the scheduler's
// passes over that window give (d); cancelling the blocker starts (c)'s
// drain.
func runBacklog(ctx context.Context, t target, o Options, figs map[string]Figure, fail func(error, ...string), progress func(string, ...any)) {
	keys := []string{keyBacklogSub, keyBacklogDone, keyPassMean, keyPassLast}
	n := o.Sizes.Backlog
	progress("%s: (c) blocker, then %d mixed backlog jobs", t.name(), n)
	blocker, err := t.submit(ctx, append(append([]string{}, common...), "-N", "4", "--gres=gpu:h100:8", "--wrap=sleep 3600")...)
	if err != nil {
		fail(fmt.Errorf("blocker: %w", err), keys...)
		return
	}
	if err := waitRunning(ctx, t, blocker, o.Timeout); err != nil {
		fail(err, keys...)
		_ = t.cancel(ctx, blocker)
		return
	}
	end, err := t.passWindow(ctx)
	if err != nil {
		fail(err, keys...)
		_ = t.cancel(ctx, blocker)
		return
	}
	t0 := time.Now()
	if err := submitParallel(ctx, t, n, o.Parallel); err != nil {
		fail(err, keys...)
		_ = t.cancel(ctx, blocker)
		_ = waitEmpty(ctx, t, o.Timeout)
		return
	}
	figs[keyBacklogSub] = Figure{Value: time.Since(t0).Seconds(), Note: fmt.Sprintf("%d at a time, %s", o.Parallel, t.bulkHow())}
	// The window closes at the first reading with a pass in it: a fast
	// submission can end before the scheduler's next (debounced) pass.
	var pass PassStats
	err = poll(ctx, time.Minute, func() (bool, error) {
		var err error
		pass, err = end(ctx)
		return pass.Passes > 0, err
	}, "a scheduling pass over the backlog")
	if err != nil {
		fail(err, keyPassMean, keyPassLast)
	} else {
		note := fmt.Sprintf("%d passes while %d jobs queued behind the blocker; %s", pass.Passes, n, pass.Note)
		figs[keyPassMean] = Figure{Value: ms(pass.Mean), Note: note}
		figs[keyPassLast] = Figure{Value: ms(pass.Last)}
	}
	progress("%s: (c) releasing the blocker, draining", t.name())
	t0 = time.Now()
	if err := t.cancel(ctx, blocker); err != nil {
		fail(err, keyBacklogDone)
		return
	}
	if err := waitEmpty(ctx, t, o.Timeout); err != nil {
		fail(err, keyBacklogDone)
		return
	}
	figs[keyBacklogDone] = Figure{Value: time.Since(t0).Seconds()}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// submitParallel submits n backlog jobs from workers processes at a time.
func submitParallel(ctx context.Context, t target, n, workers int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if _, err := t.submitBulk(ctx, jobArgs(backlogShapes[i%len(backlogShapes)]...)...); err != nil {
					errs <- fmt.Errorf("backlog job %d: %w", i+1, err)
					cancel()
					return
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if len(all) == 0 && ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(all...)
}

// waitEmpty polls until no job is pending or running (throughput.sh's
// wait_empty, at the same 100 ms).
func waitEmpty(ctx context.Context, t target, timeout time.Duration) error {
	left := -1
	err := poll(ctx, timeout, func() (bool, error) {
		n, err := t.active(ctx)
		if err == nil {
			left = n
		}
		return n == 0, err
	}, "the queue to empty")
	if err != nil && left > 0 {
		return fmt.Errorf("%w; %d jobs still queued", err, left)
	}
	return err
}

func waitRunning(ctx context.Context, t target, id string, timeout time.Duration) error {
	return poll(ctx, timeout, func() (bool, error) { return t.running(ctx, id) }, "job "+id+" to run")
}

func poll(ctx context.Context, timeout time.Duration, done func() (bool, error), what string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := done()
		if ok && err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// loadAvg is the machine load (/proc/loadavg's first three fields).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// hostBusy is the machine's non-idle CPU time so far (/proc/stat, all
// CPUs), and whether it could be read: with the wall time it says whether
// a workload was bound by the machine's cores.
func hostBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, false
	}
	var ticks int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is already in user
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, true // USER_HZ is 100 on Linux
}

// cpuNote says how much of the machine's CPU a workload of n jobs used
// since busy0 (from hostBusy), and on what, or "" when that cannot be read.
func cpuNote(busy0 time.Duration, ok0 bool, n int, on string) string {
	busy1, ok1 := hostBusy()
	if !ok0 || !ok1 || n <= 0 {
		return ""
	}
	d := busy1 - busy0
	note := fmt.Sprintf("host CPU busy %.1f core-s, %.1f ms a job", d.Seconds(), ms(d)/float64(n))
	if on != "" {
		note += " (" + on + ")"
	}
	return note
}
