package launch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/topology"
)

// StepTask is one task of a step on this node.
type StepTask struct {
	// Rank is the task's global rank in the step (SLURM_PROCID).
	Rank uint32
	// Env is the task's complete environment.
	Env map[string]string
	// DeviceFiles, when not nil, bind the task to these devices (srun
	// --gpus-per-task): it runs in a task group below the step's that
	// allows only them.
	DeviceFiles []gres.DeviceFile
}

// StepSpec is a job step's part on this node (srun): its tasks run the
// same command in a step cgroup nested under the job's, whose cpuset and
// device list are a subset of the job's.
type StepSpec struct {
	JobID  uint64
	StepID uint32
	// User, UID, GID and Groups are the job owner's identity on this node
	// (Groups nil: looked up when switching user).
	User     string
	UID, GID uint32
	Groups   []uint32
	Argv     []string
	WorkDir  string
	Tasks    []StepTask
	// CPUs and DeviceFiles are the step's share (virtual CPU ids, mapped
	// onto the host as the job's are); nil DeviceFiles inherit the job's.
	CPUs        topology.CPUSet
	DeviceFiles []gres.DeviceFile
	// JobCPUs, JobMemoryBytes and JobDeviceFiles are the job's share on
	// this node: they make the job's group where no batch step made it.
	JobCPUs        topology.CPUSet
	JobMemoryBytes int64
	JobDeviceFiles []gres.DeviceFile
	// PTY runs the task of rank 0 on a pseudo-terminal (srun --pty): its
	// stdin, stdout and stderr, read and written through Step.Stdin and
	// IO.Output as raw bytes on stream 1.
	PTY bool
}

// Validate checks what a step cannot run without, naming the field.
func (s StepSpec) Validate() error {
	switch {
	case s.JobID == 0:
		return errors.New("launch: step: jobId 0 is not a job id")
	case len(s.Argv) == 0 || s.Argv[0] == "":
		return fmt.Errorf("launch: step %d.%d: argv is empty", s.JobID, s.StepID)
	case len(s.Tasks) == 0:
		return fmt.Errorf("launch: step %d.%d: no tasks on this node", s.JobID, s.StepID)
	case !filepath.IsAbs(s.WorkDir):
		return fmt.Errorf("launch: step %d.%d: workDir %q is not an absolute path", s.JobID, s.StepID, s.WorkDir)
	case s.JobMemoryBytes < 0:
		return fmt.Errorf("launch: step %d.%d: jobMemoryBytes %d is negative", s.JobID, s.StepID, s.JobMemoryBytes)
	}
	return nil
}

// StepIO receives a step's output, whole lines at a time (a last line
// without a newline at the end comes as it is), and each task's end.
// Output is called from several goroutines; Exit once per task, after
// all of the step's output.
type StepIO struct {
	Output func(task uint32, stream int, data []byte)
	Exit   func(task uint32, exitCode, signal int)
}

// TaskExit is how one task ended.
type TaskExit struct {
	Task             uint32
	ExitCode, Signal int
}

// Step is a running step on this node.
type Step struct {
	spec   StepSpec
	runner *StepRunner
	group  cgroup.Group // nil without isolation
	done   chan struct{}

	mu      sync.Mutex
	tasks   []cgroup.Group // task groups of bound tasks
	pty     *os.File       // master of the first task's terminal (PTY)
	pids    []int
	killing bool
	exits   []TaskExit
}

// Done is closed once every task ended, leftovers were killed and all
// output and exits were delivered.
func (s *Step) Done() <-chan struct{} { return s.done }

// Exits are the tasks' ends by rank order; valid after Done.
func (s *Step) Exits() []TaskExit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TaskExit(nil), s.exits...)
}

// stepKey names a step on a node.
type stepKey struct {
	job  uint64
	step uint32
}

// jobGroup is a job's cgroup as the steps see it: the batch step's
// (owned by the runtime) or one made for steps on a node that runs no
// batch step, removed with its last step.
type jobGroup struct {
	g     cgroup.Group
	owned bool
	refs  int
}

// StepRunner launches and supervises job steps beside a Runtime's batch
// steps. Steps do not survive an agent restart: their processes stay in
// the job's group, which the job's end kills.
type StepRunner struct {
	r   *Runtime
	log *slog.Logger

	mu     sync.Mutex
	steps  map[stepKey]*Step
	groups map[uint64]*jobGroup
}

// NewStepRunner returns the step launcher of r's node.
func NewStepRunner(r *Runtime) *StepRunner {
	return &StepRunner{r: r, log: r.log, steps: map[stepKey]*Step{}, groups: map[uint64]*jobGroup{}}
}

// Launch starts the step's tasks on this node and returns once they run;
// io gets their output and ends. Launching a step already running is an
// error naming it, so a repeated order does not run it twice.
func (sr *StepRunner) Launch(ctx context.Context, spec StepSpec, io StepIO) (*Step, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k := stepKey{spec.JobID, spec.StepID}
	cred, err := sr.r.credential(Spec{JobID: spec.JobID, User: spec.User, UID: spec.UID, GID: spec.GID, Groups: spec.Groups})
	if err != nil {
		return nil, err
	}
	st := &Step{spec: spec, runner: sr, done: make(chan struct{})}
	sr.mu.Lock()
	if _, ok := sr.steps[k]; ok {
		sr.mu.Unlock()
		return nil, fmt.Errorf("launch: step %d.%d is already running on this node", spec.JobID, spec.StepID)
	}
	sr.steps[k] = st
	sr.mu.Unlock()
	if st.group, err = sr.stepGroup(spec); err != nil {
		sr.forget(st)
		return nil, err
	}
	tasks, err := st.start(cred, io)
	if err != nil {
		// Nothing may reach io once Launch has failed: the tasks die and
		// their output readers end before it returns.
		st.killAll()
		for _, t := range tasks {
			t.cmd.Wait()
			t.readers.Wait()
		}
		st.mu.Lock()
		if st.pty != nil {
			st.pty.Close()
			st.pty = nil
		}
		st.mu.Unlock()
		sr.forget(st)
		return nil, err
	}
	go st.supervise(tasks, io)
	sr.log.Info("step launched", "job", spec.JobID, "step", spec.StepID, "tasks", len(spec.Tasks), "isolated", st.group != nil)
	return st, nil
}

// Kill ends a step: SIGCONT and SIGTERM to its processes, SIGKILL to
// what remains after KillWait. Killing an unknown step is a no-op.
func (sr *StepRunner) Kill(jobID uint64, stepID uint32) {
	sr.mu.Lock()
	st := sr.steps[stepKey{jobID, stepID}]
	sr.mu.Unlock()
	if st != nil {
		st.terminate()
	}
}

// KillJob ends every step of a job on this node (the job was cancelled
// or ended).
func (sr *StepRunner) KillJob(jobID uint64) {
	sr.mu.Lock()
	var sts []*Step
	for k, st := range sr.steps {
		if k.job == jobID {
			sts = append(sts, st)
		}
	}
	sr.mu.Unlock()
	for _, st := range sts {
		st.terminate()
	}
}

// Has reports whether a step runs on this node.
func (sr *StepRunner) Has(jobID uint64, stepID uint32) bool {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	_, ok := sr.steps[stepKey{jobID, stepID}]
	return ok
}

// Running counts the steps running on this node.
func (sr *StepRunner) Running() int {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	return len(sr.steps)
}

// stepGroup makes the step's cgroup below the job's: the batch step's
// job group where this node runs it, else one made for the job's steps.
func (sr *StepRunner) stepGroup(spec StepSpec) (cgroup.Group, error) {
	r := sr.r
	if r.cfg.Cgroups == nil {
		return nil, nil
	}
	parent, err := sr.acquireJobGroup(spec)
	if err != nil {
		return nil, err
	}
	res := cgroup.Resources{CPUs: cgroup.MapCPUs(spec.CPUs, r.hostCPUs).Host}
	if spec.DeviceFiles != nil {
		res.Devices = cgroup.DeviceRules(spec.DeviceFiles)
	}
	g, err := parent.Child("step_"+strconv.FormatUint(uint64(spec.StepID), 10), res)
	if err != nil {
		sr.releaseJobGroup(spec.JobID)
		return nil, fmt.Errorf("launch: step %d.%d: %w", spec.JobID, spec.StepID, err)
	}
	return g, nil
}

func (sr *StepRunner) acquireJobGroup(spec StepSpec) (cgroup.Group, error) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if jg := sr.groups[spec.JobID]; jg != nil {
		jg.refs++
		return jg.g, nil
	}
	if j, err := sr.r.lookup(spec.JobID); err == nil {
		j.mu.Lock()
		g, ended := j.group, j.ended
		j.mu.Unlock()
		if g != nil && !ended {
			sr.groups[spec.JobID] = &jobGroup{g: g, refs: 1}
			return g, nil
		}
	}
	res := cgroup.Resources{CPUs: cgroup.MapCPUs(spec.JobCPUs, sr.r.hostCPUs).Host, MemoryLimit: spec.JobMemoryBytes,
		Devices: cgroup.DeviceRules(spec.JobDeviceFiles)}
	g, err := sr.r.cfg.Cgroups.Create(sr.r.groupPath(spec.JobID), res)
	if err != nil {
		return nil, fmt.Errorf("launch: step %d.%d: job group: %w", spec.JobID, spec.StepID, err)
	}
	sr.groups[spec.JobID] = &jobGroup{g: g, owned: true, refs: 1}
	return g, nil
}

// releaseJobGroup drops a step's hold on its job's group and removes a
// group made for steps once its last step is gone. A batch job's group
// the runtime could not remove at the job's end (a step's group was
// still in it) goes too, once the batch step has ended.
func (sr *StepRunner) releaseJobGroup(jobID uint64) {
	sr.mu.Lock()
	jg := sr.groups[jobID]
	if jg == nil {
		sr.mu.Unlock()
		return
	}
	jg.refs--
	if jg.refs > 0 {
		sr.mu.Unlock()
		return
	}
	delete(sr.groups, jobID)
	sr.mu.Unlock()
	if !jg.owned {
		if _, err := sr.r.lookup(jobID); err == nil {
			return // the batch step still runs; its end removes the group
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), sweepTimeout)
	defer cancel()
	if jg.owned {
		jg.g.Kill(ctx)
	}
	if err := jg.g.Delete(); err != nil && jg.owned {
		sr.log.Warn("could not remove a job group made for steps", "job", jobID, "group", jg.g.Path(), "err", err)
	}
}

func (sr *StepRunner) forget(st *Step) {
	sr.mu.Lock()
	delete(sr.steps, stepKey{st.spec.JobID, st.spec.StepID})
	sr.mu.Unlock()
	if st.group != nil {
		st.mu.Lock()
		tasks := st.tasks
		st.mu.Unlock()
		for _, g := range tasks {
			if err := g.Delete(); err != nil {
				sr.log.Warn("could not remove a task group", "group", g.Path(), "err", err)
			}
		}
		if err := st.group.Delete(); err != nil {
			sr.log.Warn("could not remove a step group", "group", st.group.Path(), "err", err)
		}
		sr.releaseJobGroup(st.spec.JobID)
	}
}

// terminate is the step's cancel: SIGCONT, SIGTERM, SIGKILL after KillWait.
func (st *Step) terminate() {
	st.mu.Lock()
	if st.killing {
		st.mu.Unlock()
		return
	}
	st.killing = true
	st.mu.Unlock()
	st.signal(syscall.SIGCONT)
	st.signal(syscall.SIGTERM)
	t := st.runner.r.cfg.Clock.AfterFunc(st.runner.r.cfg.KillWait, st.killAll)
	go func() {
		<-st.done
		t.Stop()
	}()
}

// signal sends sig to every process of the step.
func (st *Step) signal(sig syscall.Signal) {
	if st.group != nil {
		if err := st.group.Signal(sig); err != nil {
			st.runner.log.Warn("step signal", "job", st.spec.JobID, "step", st.spec.StepID, "signal", sig, "err", err)
		}
		return
	}
	st.mu.Lock()
	pids := append([]int(nil), st.pids...)
	st.mu.Unlock()
	for _, pid := range pids {
		syscall.Kill(-pid, sig)
	}
}

// killAll SIGKILLs every process of the step (its group, or each task's
// process group without isolation).
func (st *Step) killAll() {
	if st.group != nil {
		ctx, cancel := context.WithTimeout(context.Background(), sweepTimeout)
		defer cancel()
		if err := st.group.Kill(ctx); err != nil {
			st.runner.log.Error("step leftovers survived the kill", "job", st.spec.JobID, "step", st.spec.StepID, "err", err)
		}
		return
	}
	st.signal(syscall.SIGKILL)
}

// taskProc is one started task.
type taskProc struct {
	rank    uint32
	cmd     *exec.Cmd
	readers sync.WaitGroup
}
