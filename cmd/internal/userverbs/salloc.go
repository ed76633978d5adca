package userverbs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/topology"
)

func newSallocCmdWith(env userEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "salloc [sbatch options] [COMMAND [ARGS...]]",
		Short: "Obtain an allocation and run a command in it (salloc)",
		Long: `Create an allocation with sbatch's options (-N, -n, -p, -t, --mem, --gres, …),
wait until it is granted, then run COMMAND (default $SHELL) here, on this
host, with SLURM_JOB_ID, SLURM_JOB_NODELIST and the other allocation variables
set, so that srun inside it runs steps on the allocated nodes. The allocation
is released when COMMAND exits; salloc exits with COMMAND's status.

If the allocation is revoked first (scancel, or its time limit), salloc says
so and, with -K/--kill-command[=SIGNAL], signals COMMAND (default SIGHUP when
salloc's input is a terminal, else SIGTERM); without it, COMMAND runs on.

Parity's own flags (--controller, --token, --ca) may appear before COMMAND.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSalloc(cmd, env, args)
		},
	}
}

func runSalloc(cmd *cobra.Command, env userEnv, args []string) error {
	a, err := parseSrunArgs("salloc", args)
	if err != nil {
		return err
	}
	if a.help {
		return cmd.Help()
	}
	if a.label || a.pty || a.jobID != 0 {
		return usageError("salloc", "-l/--label, --pty and --jobid are srun options")
	}
	argv := a.argv
	if len(argv) == 0 {
		sh := env.getenv("SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		argv = []string{sh}
	}
	req, err := parseAllocation(env, a.opts, "true")
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("salloc: %w", err)}
	}
	if src := req.Sources["name"]; src == "" || src == "default" {
		req.Name = "interactive"
	}
	s, err := a.client.dial(cmd, "salloc", env)
	if err != nil {
		return err
	}
	defer s.close()
	// The command's stderr and salloc's notices share it, from two
	// goroutines when it is not a file.
	errw := &lockedWriter{w: cmd.ErrOrStderr()}
	id, err := allocate(cmd.Context(), s, req, "salloc", errw)
	if err != nil {
		return err
	}
	fmt.Fprintf(errw, "salloc: Granted job allocation %d\n", id)
	j, err := s.c.GetJob(cmd.Context(), id, false)
	if err != nil {
		releaseAllocation(s, id, 1, "salloc", errw)
		return s.fail(err)
	}
	var revoked atomic.Bool
	code, runErr := runAllocated(cmd, env, argv, allocationEnv(j, clusterName(cmd.Context(), s), s.addr), errw, func(ctx context.Context, c *exec.Cmd) {
		watchRevocation(ctx, s, id, func() {
			revoked.Store(true)
			fmt.Fprintf(errw, "salloc: Job allocation %d has been revoked.\n", id)
			if a.killCommand {
				c.Process.Signal(killSignal(a.killSignal, env.stdin))
			}
		})
	})
	if !revoked.Load() { // a revoked allocation is gone already
		releaseAllocation(s, id, code, "salloc", errw)
	}
	if runErr != nil {
		return &exitError{code: code, err: fmt.Errorf("salloc: %w", runErr)}
	}
	if code != 0 {
		return &exitError{code: code, err: fmt.Errorf("salloc: %s exited %d", argv[0], code)}
	}
	return nil
}

// allocationEnv is what salloc adds to its command's environment, as
// Slurm 22.05's salloc does (seen on the anchor): the job's identity and
// nodes (srun inside finds its allocation by them), its CPUs and tasks per
// node, the options whose variables srun reads back (GPU counts, memory,
// task counts, -c when given), the cluster, and the controller it came
// from. The account is the one scontrol shows: none where the cluster
// has no accounting and the job named none.
func allocationEnv(j *pb.Job, cluster, addr string) map[string]string {
	s := j.GetSpec()
	id := strconv.FormatUint(j.GetId(), 10)
	nodes := jobNodes(j)
	v := map[string]string{"SLURM_JOB_ID": id, "SLURM_JOBID": id, "SLURM_JOB_NODELIST": nodes, "SLURM_NODELIST": nodes,
		"SLURM_JOB_NUM_NODES": strconv.Itoa(len(j.GetAlloc())), "SLURM_NNODES": strconv.Itoa(len(j.GetAlloc())),
		"SLURM_JOB_NAME": s.GetName(), "SLURM_JOB_PARTITION": j.GetPartition(), "SLURM_NODE_ALIASES": "(null)",
		"SLURM_SUBMIT_DIR": s.GetWorkdir(), client.EnvController: addr}
	set := func(k, val string) {
		if val != "" {
			v[k] = val
		}
	}
	num := func(k string, n int64) {
		if n > 0 {
			v[k] = strconv.FormatInt(n, 10)
		}
	}
	set("SLURM_CLUSTER_NAME", cluster)
	set("SLURM_JOB_ACCOUNT", s.GetAccount())
	var cpus []int
	for _, a := range j.GetAlloc() {
		set, err := topology.ParseCPUList(a.GetCpus())
		if err != nil {
			cpus = nil
			break
		}
		cpus = append(cpus, set.Count())
	}
	maps.Copy(v, jobspec.AllocationCounts(cpus, int(s.GetNtasks()), int(s.GetNtasksPerNode()), int(s.GetCpusPerTask()), s.GetDerivedOptions()))
	set("SLURM_GPUS", s.GetGpusOption())
	set("SLURM_GPUS_PER_NODE", s.GetGpusPerNodeOption())
	set("SLURM_GPUS_PER_TASK", s.GetGpusPerTaskOption())
	num("SLURM_CPUS_PER_GPU", int64(s.GetCpusPerGpu()))
	switch {
	case s.GetMemPerNodeMb() > 0:
		num("SLURM_MEM_PER_NODE", s.GetMemPerNodeMb())
	case s.GetMemPerCpuMb() > 0:
		num("SLURM_MEM_PER_CPU", s.GetMemPerCpuMb())
	case s.GetMemPerGpuMb() > 0:
		num("SLURM_MEM_PER_GPU", s.GetMemPerGpuMb())
	}
	return v
}

// clusterName asks the controller for the cluster's name; none when it
// cannot say (SLURM_CLUSTER_NAME is then left out).
func clusterName(ctx context.Context, s *session) string {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	info, err := s.c.Info(ctx)
	if err != nil {
		return ""
	}
	return info.GetName()
}

// revocationPoll is how often salloc asks whether its allocation is
// still there while the command runs.
const revocationPoll = time.Second

// watchRevocation calls revoked once if job id stops running before ctx
// ends (the command exited).
func watchRevocation(ctx context.Context, s *session, id uint64, revoked func()) {
	tick := time.NewTicker(revocationPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		j, err := s.c.GetJob(ctx, id, false)
		if err == nil && j.GetState() != "RUNNING" && j.GetState() != "SUSPENDED" {
			if ctx.Err() == nil {
				revoked()
			}
			return
		}
	}
}

// killSignal is -K's signal: the one given, else SIGHUP for an interactive
// session (input from a terminal) and SIGTERM otherwise, as Slurm's salloc.
func killSignal(n int, stdin io.Reader) syscall.Signal {
	if n > 0 {
		return syscall.Signal(n)
	}
	if f, ok := stdin.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		return syscall.SIGHUP
	}
	return syscall.SIGTERM
}

// lockedWriter serialises writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// runAllocated runs salloc's command in the foreground with the terminal
// and returns its exit status (128+N for a signal). An interrupt reaches
// the command through the terminal; salloc waits for it either way. watch
// runs while the command does; its context ends when the command has.
func runAllocated(cmd *cobra.Command, env userEnv, argv []string, add map[string]string, stderr io.Writer, watch func(context.Context, *exec.Cmd)) (int, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = env.environ()
	for k, v := range add {
		c.Env = append(c.Env, k+"="+v)
	}
	if wd, err := env.getwd(); err == nil {
		c.Dir = wd
	}
	c.Stdin, c.Stdout, c.Stderr = env.stdin, cmd.OutOrStdout(), stderr
	if l, ok := stderr.(*lockedWriter); ok {
		if f, ok := l.w.(*os.File); ok {
			c.Stderr = f // the command writes to the file itself
		}
	}
	if f, ok := env.stdin.(*os.File); ok {
		c.Stdin = f
	}
	err := c.Start()
	if err == nil {
		ctx, stop := context.WithCancel(cmd.Context())
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			watch(ctx, c)
		}()
		err = c.Wait()
		stop()
		<-watched
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 1, err
}
