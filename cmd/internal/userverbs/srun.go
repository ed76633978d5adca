package userverbs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/cmd/internal/sbatch"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client/format"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

func newSrunCmdWith(env userEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "srun [options] COMMAND [ARGS...]",
		Short: "Run a job step on the nodes of an allocation (srun)",
		Long: `Run COMMAND as a job step. Inside an allocation ($SLURM_JOB_ID set, as in a
batch script or under salloc) the step runs on the job's nodes: every node by
default, narrowed with -N/--nodes, -n/--ntasks, --ntasks-per-node,
-c/--cpus-per-task, --gpus-per-node and --gpus-per-task. Outside one, srun
first creates an allocation with the same options as sbatch (-p, -t, --mem,
--gres, …), waits for it, runs the step and ends the job with the step.

The tasks' output arrives line by line on srun's stdout and stderr; srun
exits with the highest task exit code (128+N when a signal N ended one).
Interrupting srun (Ctrl-C, SIGTERM) cancels the step.

As in Slurm 22.05, a step takes every CPU the job holds on its nodes and
keeps them while it runs, so a second step started beside it waits ("step
creation temporarily disabled, retrying"). With -c or --exact a step takes
only the CPUs it asks for (-c per task, one per task without -c), so
concurrent steps (srun -n1 --exact ... &) run side by side on different
CPUs; --overlap shares the job's CPUs and GPUs with its other steps (e.g.
a shell beside a running step). GPUs a step asks for by count
(--gpus-per-task, --gpus-per-node) are its own while it runs too; a step
that asks for no GPU count shares all of the job's.

--gpu-bind (or SLURM_GPU_BIND, which sbatch --gpu-bind leaves in the job)
says which of the step's GPUs on a node each task sees, counted from 0 as
the job sees them: closest, none, map_gpu:1,0 (map:), mask_gpu:0x3,0xc
(mask:), per_task:N, single:N (N tasks share each GPU), with an optional
"verbose," prefix. --gpus-per-task implies per_task; none turns it off.

  -l, --label         prefix each output line with its task number ("0: ")
  --jobid=N           run in job N instead of $SLURM_JOB_ID
  --exact             only the CPUs asked for (also $SLURM_EXACT)
  --overlap           share CPUs and GPUs with the job's other steps (also $SLURM_OVERLAP)
  -u, --unbuffered    accepted; output is always line-buffered
  --pty               run the first task on a pseudo-terminal fed by srun's
                      stdin (srun --pty bash); other tasks' stdin is /dev/null

Parity's own flags (--controller, --token, --ca) may appear before COMMAND.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSrun(cmd, env, args)
		},
	}
}

// srunArgs is a parsed srun command line.
type srunArgs struct {
	client clientFlags
	label  bool
	pty    bool
	// exact and overlap are srun --exact and --overlap (see planStep).
	exact, overlap bool
	jobID          uint64
	help           bool
	// killCommand is salloc's -K/--kill-command[=signal]: signal the
	// command when the allocation is revoked; killSignal 0 is the default.
	killCommand bool
	killSignal  int
	// opts are the sbatch-style resource options, argv the command.
	opts []string
	argv []string
}

// parseSrunArgs splits srun's own options from the sbatch-style ones, up
// to the command; everything after it belongs to the command.
func parseSrunArgs(verb string, args []string) (srunArgs, error) {
	var a srunArgs
	argWords := jobspec.ArgWordsFunc()
	for i := 0; i < len(args); {
		w, err := expandOwnLong(verb, args[i])
		if err != nil {
			return a, err
		}
		name, value, attached := strings.Cut(w, "=")
		switch {
		case w == "-l" || w == "--label":
			a.label = true
		case w == "-u" || w == "--unbuffered":
		case w == "--exact":
			a.exact = true
		case w == "--overlap":
			a.overlap = true
		case w == "--pty":
			a.pty = true
		case w == "-h" || w == "--help" || w == "--usage":
			a.help = true
			return a, nil
		case name == "--jobid" || isConnFlag(name):
			if !attached {
				if i+1 >= len(args) {
					return a, usageError(verb, "%s requires a value", name)
				}
				value = args[i+1]
				i++
			}
			if name == "--jobid" {
				id, err := strconv.ParseUint(value, 10, 64)
				if err != nil || id == 0 {
					return a, usageError(verb, "--jobid=%q is not a job id", value)
				}
				a.jobID = id
			} else {
				a.client.setConn(name, value)
			}
		case verb == "salloc" && (name == "--kill-command" || strings.HasPrefix(w, "-K")):
			// An optional value, so only attached: --kill-command=TERM, -KTERM.
			v := strings.TrimPrefix(w, "-K")
			if name == "--kill-command" {
				v = value
			}
			a.killCommand = true
			if v != "" {
				sig, err := jobspec.ParseSignal(v)
				if err != nil || strings.ContainsAny(v, ":@") {
					return a, usageError(verb, "--kill-command=%q: want a signal name or number", v)
				}
				a.killSignal = sig.Number
			}
		case w == "--":
			a.argv = args[i+1:]
			return a, nil
		default:
			n := argWords(args[i:])
			if n == 0 {
				a.argv = args[i:]
				return a, nil
			}
			a.opts = append(a.opts, args[i:i+n]...)
			i += n
			continue
		}
		i++
	}
	return a, nil
}

// parseAllocation resolves the sbatch-style options as submit does, with
// a placeholder script: what is requested is an allocation.
func parseAllocation(env userEnv, opts []string, wrap string) (*jobspec.Request, error) {
	return sbatch.Parse(env.sbatch(), append(append([]string(nil), opts...), "--wrap", wrap))
}

// parseStepOptions resolves them for a step in an existing job, whose
// task count the job gives (see jobspec.ParseOptions.InAllocation).
func parseStepOptions(env userEnv, opts []string, wrap string) (*jobspec.Request, error) {
	return sbatch.ParseStep(env.sbatch(), append(append([]string(nil), opts...), "--wrap", wrap))
}

// stepRequest is the step srun asks for, from the resolved options.
func stepRequest(env userEnv, req *jobspec.Request, jobID uint64, argv []string) (*pb.StepRequest, error) {
	wd, err := env.getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	r := &pb.StepRequest{JobId: jobID, Argv: argv, Workdir: wd, Env: map[string]string{}}
	for _, kv := range env.environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			r.Env[k] = v
		}
	}
	given := func(field string) bool { return givenOption(req, field) }
	if given("name") {
		r.Name = req.Name
	}
	if given("nodes") {
		r.Nodes = int32(req.Nodes.Min)
	}
	if given("ntasks") {
		r.Ntasks = int32(req.NTasks)
	}
	r.NtasksPerNode = int32(req.NTasksPerNode)
	if given("cpusPerTask") {
		r.CpusPerTask = int32(req.CPUsPerTask)
	}
	if r.GpusPerTask, err = gpuCount("--gpus-per-task", req.GPU.GPUsPerTask); err != nil {
		return nil, err
	}
	if r.GpuBind = req.GPU.GPUBind; r.GpuBind == "" {
		// Inside a job sbatch --gpu-bind left SLURM_GPU_BIND, which srun reads.
		if v := env.getenv("SLURM_GPU_BIND"); v != "" {
			if _, err := jobspec.ParseGPUBind(v); err != nil {
				return nil, fmt.Errorf("SLURM_GPU_BIND: %w", err)
			}
			r.GpuBind = v
		}
	}
	if r.GpusPerNode, err = gpuCount("--gpus-per-node", req.GPU.GPUsPerNode); err != nil {
		return nil, err
	}
	if r.GpusPerNode == 0 && req.GPU.GPUs != "" {
		total, err := gpuCount("--gpus", req.GPU.GPUs)
		if err != nil {
			return nil, err
		}
		r.GpusPerNode = (total + max(r.Nodes, 1) - 1) / max(r.Nodes, 1)
	}
	return r, nil
}

// gpuCount reads a GPU option's count ("2" or "h100:2").
func gpuCount(opt, v string) (int32, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v[strings.LastIndexByte(v, ':')+1:])
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: the count is not a number", opt, v)
	}
	return int32(n), nil
}

func runSrun(cmd *cobra.Command, env userEnv, args []string) error {
	a, err := parseSrunArgs("srun", args)
	if err != nil {
		return err
	}
	if a.help {
		return cmd.Help()
	}
	if len(a.argv) == 0 {
		return usageError("srun", "want a command to run (see --help)")
	}
	if a.jobID == 0 {
		if v := env.getenv("SLURM_JOB_ID"); v != "" {
			if a.jobID, err = strconv.ParseUint(v, 10, 64); err != nil {
				return usageError("srun", "$SLURM_JOB_ID=%q is not a job id", v)
			}
		}
	}
	parse := parseAllocation
	if a.jobID != 0 {
		parse = parseStepOptions
	}
	req, err := parse(env, a.opts, "true")
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("srun: %w", err)}
	}
	s, err := a.client.dial(cmd, "srun", env)
	if err != nil {
		return err
	}
	defer s.close()
	errw := cmd.ErrOrStderr()
	ctx := cmd.Context()
	ownJob := a.jobID == 0
	if ownJob {
		if src := req.Sources["name"]; src == "" || src == "default" {
			req.Name = filepath.Base(a.argv[0])
		}
		if a.jobID, err = allocate(ctx, s, req, "srun", errw); err != nil {
			return err
		}
	}
	step, err := stepRequest(env, req, a.jobID, a.argv)
	if err == nil && !ownJob {
		err = inheritJobCounts(env, req, step)
	}
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("srun: %w", err)}
	}
	// SLURM_EXACT and SLURM_OVERLAP are srun's input variables for them.
	step.Pty = a.pty
	if a.label {
		step.Env["SLURM_LABELIO"] = "1" // srun tells its tasks, as Slurm's does
	}
	if givenOption(req, "ntasksPerNode") && step.NtasksPerNode > 0 {
		// Only where it still counts: an inherited -n that it cannot
		// hold drops it, and the job's own value reaches the tasks.
		step.Env["SLURM_NTASKS_PER_NODE"] = strconv.Itoa(int(step.NtasksPerNode))
	}
	step.Exact = a.exact || env.getenv("SLURM_EXACT") != ""
	step.Overlap = a.overlap || env.getenv("SLURM_OVERLAP") != ""
	var in io.Reader
	if a.pty {
		in = env.stdin
		restore := rawTerminal(env.stdin)
		defer restore()
	}
	code, runErr := runStep(ctx, s, step, a.label, in, cmd.OutOrStdout(), errw)
	if ownJob {
		releaseAllocation(s, a.jobID, code, "srun", errw)
	}
	if runErr != nil {
		return runErr
	}
	if code != 0 {
		return &exitError{code: code, err: fmt.Errorf("srun: step %d.x exited %d", a.jobID, code)}
	}
	return nil
}

// runStep runs one step and copies its output; it returns srun's exit
// status. Interrupting ctx cancels the step.
func runStep(ctx context.Context, s *session, req *pb.StepRequest, label bool, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	stream, err := s.c.RunStep(ctx, req)
	if err != nil {
		return 1, s.fail(err)
	}
	var mu sync.Mutex
	waited, backoff := false, 100*time.Millisecond
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return 1, &exitError{code: 1, err: errors.New("srun: the controller ended the step's stream without its end")}
		}
		if status.Code(err) == codes.ResourceExhausted && ctx.Err() == nil {
			// Other steps hold the GPUs this one asks for: wait for
			// them, as Slurm's srun does, then ask again.
			if !waited {
				fmt.Fprintf(stderr, "srun: Job %d step creation temporarily disabled, retrying (Requested nodes are busy)\n", req.GetJobId())
				waited = true
			}
			select {
			case <-ctx.Done():
				return 130, &exitError{code: 130, err: fmt.Errorf("srun: interrupted while waiting for a step of job %d", req.GetJobId())}
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			if stream, err = s.c.RunStep(ctx, req); err != nil {
				return 1, s.fail(err)
			}
			continue
		}
		if err != nil {
			if ctx.Err() != nil || status.Code(err) == codes.Canceled {
				fmt.Fprintf(stderr, "srun: job %d step cancelled\n", req.GetJobId())
				return 130, &exitError{code: 130, err: fmt.Errorf("srun: interrupted: step of job %d cancelled", req.GetJobId())}
			}
			return 1, s.fail(err)
		}
		switch ev.GetKind() {
		case "started":
			if waited {
				fmt.Fprintf(stderr, "srun: Step created for job %d\n", req.GetJobId())
			}
			if stdin != nil {
				go sendInput(ctx, s, req.GetJobId(), ev.GetStepId(), stdin, stderr)
			}
		case "output":
			w := stdout
			if ev.GetStream() == 2 {
				w = stderr
			}
			data := ev.GetData()
			if label && !req.GetPty() {
				data = append([]byte(fmt.Sprintf("%d: ", ev.GetTask())), data...)
			}
			mu.Lock()
			w.Write(data)
			mu.Unlock()
		case "error":
			fmt.Fprintf(stderr, "srun: error: %s: %s\n", ev.GetNode(), ev.GetReason())
		case "exit":
			if ev.GetSignal() != 0 {
				fmt.Fprintf(stderr, "srun: error: task %d: killed by signal %d\n", ev.GetTask(), ev.GetSignal())
			}
		case "end":
			if ev.GetSignal() != 0 {
				return 128 + int(ev.GetSignal()), nil
			}
			return int(ev.GetExitCode()), nil
		}
	}
}

// allocate submits an interactive job for the request and waits until it
// runs; interrupted, it cancels the job.
func allocate(ctx context.Context, s *session, req *jobspec.Request, verb string, stderr io.Writer) (uint64, error) {
	spec := format.Spec(req)
	spec.Interactive = true
	id, err := s.c.Submit(ctx, spec)
	if err != nil {
		return 0, s.fail(err)
	}
	fmt.Fprintf(stderr, "%s: job %d queued and waiting for resources\n", verb, id)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		j, err := s.c.GetJob(ctx, id, false)
		switch {
		case err != nil && ctx.Err() == nil:
			return 0, s.fail(err)
		case err == nil && j.GetState() == "RUNNING":
			fmt.Fprintf(stderr, "%s: job %d has been allocated resources on %s\n", verb, id, jobNodes(j))
			return id, nil
		case err == nil && j.GetState() != "PENDING":
			return 0, &exitError{code: 1, err: fmt.Errorf("%s: job %d ended %s before it started (%s)", verb, id, j.GetState(), j.GetReason())}
		}
		select {
		case <-ctx.Done():
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rpcTimeout)
			s.c.CancelJob(cctx, id)
			cancel()
			fmt.Fprintf(stderr, "%s: job allocation %d cancelled while waiting\n", verb, id)
			return 0, &exitError{code: 130, err: fmt.Errorf("%s: interrupted while waiting for job %d", verb, id)}
		case <-tick.C:
		}
	}
}

// releaseAllocation ends an interactive job with its command's status.
func releaseAllocation(s *session, id uint64, code int, verb string, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	exit, sig := int32(code), int32(0)
	if code > 128 {
		exit, sig = 0, int32(code-128)
	}
	if _, err := s.c.EndAllocation(ctx, id, exit, sig); err != nil {
		fmt.Fprintf(stderr, "%s: error: could not release job allocation %d: %s\n", verb, id, s.fail(err))
		return
	}
	fmt.Fprintf(stderr, "%s: Relinquishing job allocation %d\n", verb, id)
}

func jobNodes(j *pb.Job) string {
	var names []string
	for _, a := range j.GetAlloc() {
		names = append(names, a.GetNode())
	}
	return jobspec.CompressHostlist(names)
}
