package userverbs

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/scheduler/agent/shim"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

const (
	labShimArg = "__parity_userverbs_shim__"
	// srunArg makes the test binary act as srun, for batch scripts.
	srunArg = "__parity_userverbs_srun__"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == labShimArg {
		os.Exit(shim.Main(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == srunArg {
		root := testRoot(realUserEnv(), os.Stdout, os.Stderr)
		os.Exit(Execute(context.Background(), root, append([]string{"srun"}, os.Args[2:]...), os.Stderr))
	}
	os.Exit(m.Run())
}

func TestParseSrunArgs(t *testing.T) {
	cases := []struct {
		in          []string
		opts, argv  []string
		label, pty  bool
		exact, ovl  bool
		jobID       uint64
		controller  string
		errContains string
	}{
		{in: []string{"-N2", "-n", "4", "-l", "hostname", "-f"}, opts: []string{"-N2", "-n", "4"}, argv: []string{"hostname", "-f"}, label: true},
		{in: []string{"--jobid=7", "--controller", "h:1", "-u", "--", "-weird"}, argv: []string{"-weird"}, jobID: 7, controller: "h:1"},
		{in: []string{"--gpus-per-task=1", "--label", "sh", "-l"}, opts: []string{"--gpus-per-task=1"}, argv: []string{"sh", "-l"}, label: true},
		{in: []string{"--pty", "bash"}, argv: []string{"bash"}, pty: true},
		{in: []string{"-n1", "--exact", "a"}, opts: []string{"-n1"}, argv: []string{"a"}, exact: true},
		{in: []string{"--overlap", "--pty", "bash"}, argv: []string{"bash"}, pty: true, ovl: true},
		{in: []string{"--jobid=x", "true"}, errContains: `--jobid="x" is not a job id`},
		{in: []string{"--controller"}, errContains: "--controller requires a value"},
	}
	for _, tc := range cases {
		a, err := parseSrunArgs("srun", tc.in)
		if tc.errContains != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errContains) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.errContains)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if !slices.Equal(a.opts, tc.opts) || !slices.Equal(a.argv, tc.argv) || a.label != tc.label || a.pty != tc.pty || a.exact != tc.exact || a.overlap != tc.ovl || a.jobID != tc.jobID || a.client.controller != tc.controller {
			t.Errorf("%q: opts %q argv %q label %v pty %v exact %v overlap %v job %d controller %q",
				tc.in, a.opts, a.argv, a.label, a.pty, a.exact, a.overlap, a.jobID, a.client.controller)
		}
	}
}

func TestParseSallocKillCommand(t *testing.T) {
	for _, tc := range []struct {
		in          []string
		kill        bool
		sig         int
		argv        []string
		errContains string
	}{
		{in: []string{"-K", "-N1", "sh"}, kill: true, argv: []string{"sh"}},
		{in: []string{"--kill-command=TERM", "sh"}, kill: true, sig: 15, argv: []string{"sh"}},
		{in: []string{"-K9", "sh"}, kill: true, sig: 9, argv: []string{"sh"}},
		{in: []string{"--kill-command=SIGUSR1", "sh", "-K"}, kill: true, sig: 10, argv: []string{"sh", "-K"}},
		{in: []string{"-N1", "sh"}, argv: []string{"sh"}},
		{in: []string{"--kill-command=BOGUS", "sh"}, errContains: `--kill-command="BOGUS"`},
		{in: []string{"--kill-command=B:USR1", "sh"}, errContains: "want a signal name or number"},
	} {
		a, err := parseSrunArgs("salloc", tc.in)
		if tc.errContains != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errContains) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.errContains)
			}
			continue
		}
		if err != nil || a.killCommand != tc.kill || a.killSignal != tc.sig || !slices.Equal(a.argv, tc.argv) {
			t.Errorf("%q: kill %v signal %d argv %q (%v); want %v %d %q", tc.in, a.killCommand, a.killSignal, a.argv, err, tc.kill, tc.sig, tc.argv)
		}
	}
	if a, _ := parseSrunArgs("srun", []string{"-K", "sh"}); a.killCommand { // srun's -K is --kill-on-bad-exit
		t.Error("srun -K was taken for salloc's --kill-command")
	}
}

func TestStepRequestFromOptions(t *testing.T) {
	env := testEnv("/work", map[string]string{"USER": "alice", "HOME": "/home/alice"}, "")
	for _, tc := range []struct {
		opts []string
		want *pb.StepRequest
	}{
		{nil, &pb.StepRequest{}},
		{[]string{"-N2", "-n4", "-c2", "--gpus-per-task=h100:1", "-J", "x"}, &pb.StepRequest{Nodes: 2, Ntasks: 4, CpusPerTask: 2, GpusPerTask: 1, Name: "x"}},
		{[]string{"--ntasks-per-node=3", "--gpus-per-node=2"}, &pb.StepRequest{NtasksPerNode: 3, GpusPerNode: 2}},
		{[]string{"-N2", "-G", "3"}, &pb.StepRequest{Nodes: 2, GpusPerNode: 2}},
	} {
		req, err := parseAllocation(env, tc.opts, "true")
		if err != nil {
			t.Fatalf("%q: %v", tc.opts, err)
		}
		got, err := stepRequest(env, req, 9, []string{"true"})
		if err != nil {
			t.Fatalf("%q: %v", tc.opts, err)
		}
		w := tc.want
		if got.GetJobId() != 9 || got.GetWorkdir() != "/work" || got.GetEnv()["HOME"] != "/home/alice" || got.GetName() != w.GetName() ||
			got.GetNodes() != w.GetNodes() || got.GetNtasks() != w.GetNtasks() || got.GetNtasksPerNode() != w.GetNtasksPerNode() ||
			got.GetCpusPerTask() != w.GetCpusPerTask() || got.GetGpusPerTask() != w.GetGpusPerTask() || got.GetGpusPerNode() != w.GetGpusPerNode() {
			t.Errorf("%q: got %v, want %v", tc.opts, got, w)
		}
	}
}

// srun --gpu-bind travels in the step request; inside a job whose sbatch
// had --gpu-bind, srun takes SLURM_GPU_BIND, and its own option wins.
func TestStepRequestGPUBind(t *testing.T) {
	for _, tc := range []struct {
		opts      []string
		inJob     string // SLURM_GPU_BIND
		want, err string
	}{
		{[]string{"--gpu-bind=map_gpu:1,0"}, "", "map_gpu:1,0", ""},
		{nil, "single:2", "single:2", ""},
		{[]string{"--gpu-bind=none"}, "single:2", "none", ""},
		{nil, "", "", ""},
		{nil, "nearest", "", `SLURM_GPU_BIND: jobspec: invalid: --gpu-bind="nearest"`},
	} {
		vars := map[string]string{"USER": "alice", "HOME": "/home/alice"}
		if tc.inJob != "" {
			vars["SLURM_GPU_BIND"] = tc.inJob
		}
		env := testEnv("/work", vars, "")
		req, err := parseAllocation(env, tc.opts, "true")
		if err != nil {
			t.Fatalf("%q: %v", tc.opts, err)
		}
		got, err := stepRequest(env, req, 9, []string{"true"})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q with SLURM_GPU_BIND=%q: %v, want an error containing %q", tc.opts, tc.inJob, err, tc.err)
			}
			continue
		}
		if err != nil || got.GetGpuBind() != tc.want {
			t.Errorf("%q with SLURM_GPU_BIND=%q: gpu_bind %q (%v), want %q", tc.opts, tc.inJob, got.GetGpuBind(), err, tc.want)
		}
	}
}

// In a job, srun takes the counts the job's environment gives where its
// own options are silent, as the anchor's srun did: SLURM_NTASKS as -n
// (also beside -N), SLURM_NTASKS_PER_NODE, SRUN_CPUS_PER_TASK as -c (never
// SLURM_CPUS_PER_TASK in 22.05); the inherited -n wins over a
// --ntasks-per-node that cannot hold it on the job's nodes.
func TestInheritJobCounts(t *testing.T) {
	for _, tc := range []struct {
		opts []string
		env  map[string]string
		want *pb.StepRequest
		err  string
	}{
		{nil, map[string]string{"SLURM_NTASKS": "4", "SLURM_NTASKS_PER_NODE": "2"}, &pb.StepRequest{Ntasks: 4, NtasksPerNode: 2}, ""},
		{[]string{"-N", "1"}, map[string]string{"SLURM_NTASKS": "4"}, &pb.StepRequest{Nodes: 1, Ntasks: 4}, ""},
		{[]string{"-n", "1"}, map[string]string{"SLURM_NTASKS": "4"}, &pb.StepRequest{Ntasks: 1}, ""},
		{nil, map[string]string{"SLURM_CPUS_PER_TASK": "4"}, &pb.StepRequest{}, ""},
		{nil, map[string]string{"SRUN_CPUS_PER_TASK": "4"}, &pb.StepRequest{CpusPerTask: 4}, ""},
		{[]string{"--ntasks-per-node=1"}, map[string]string{"SLURM_NTASKS": "2", "SLURM_NNODES": "1"}, &pb.StepRequest{Ntasks: 2}, ""},
		{[]string{"--ntasks-per-node=1"}, map[string]string{"SLURM_NTASKS": "2", "SLURM_NNODES": "2"}, &pb.StepRequest{Ntasks: 2, NtasksPerNode: 1}, ""},
		{nil, map[string]string{}, &pb.StepRequest{}, ""},
		{nil, map[string]string{"SLURM_NTASKS": "many"}, nil, `$SLURM_NTASKS="many"`},
		// -c alone: as many tasks as the job's CPUs hold (the anchor's
		// srun -c 1 in a job of 2 CPUs, and in -N 2 -c 4).
		{[]string{"-c", "1"}, map[string]string{"SLURM_JOB_CPUS_PER_NODE": "2"}, &pb.StepRequest{Ntasks: 2, CpusPerTask: 1}, ""},
		{[]string{"-c", "1"}, map[string]string{"SLURM_JOB_CPUS_PER_NODE": "4(x2)"}, &pb.StepRequest{Ntasks: 8, CpusPerTask: 1}, ""},
		{[]string{"-c", "2", "-N", "1"}, map[string]string{"SLURM_JOB_CPUS_PER_NODE": "4(x2)"}, &pb.StepRequest{Nodes: 1, Ntasks: 2, CpusPerTask: 2}, ""},
		{[]string{"-c", "1"}, map[string]string{"SLURM_JOB_CPUS_PER_NODE": "2", "SLURM_NTASKS": "1"}, &pb.StepRequest{Ntasks: 1, CpusPerTask: 1}, ""},
		{[]string{"-c", "1"}, map[string]string{"SLURM_JOB_CPUS_PER_NODE": "two"}, nil, "$SLURM_JOB_CPUS_PER_NODE"},
		// The job's GPU options, where srun's own are silent (the anchor's
		// steps in jobs of --gpus-per-task=1 and --gpus-per-node=2).
		{nil, map[string]string{"SLURM_GPUS_PER_TASK": "1"}, &pb.StepRequest{GpusPerTask: 1}, ""},
		{[]string{"--gpus-per-task=2", "-n", "1"}, map[string]string{"SLURM_GPUS_PER_TASK": "1"}, &pb.StepRequest{Ntasks: 1, GpusPerTask: 2}, ""},
		{[]string{"-G", "1"}, map[string]string{"SLURM_GPUS_PER_NODE": "2", "SLURM_NNODES": "1"}, &pb.StepRequest{GpusPerNode: 2}, ""},
		// What the anchor's slurmctld refused: -G below the step's nodes,
		// the job's --cpus-per-gpu with no GPU asked.
		{[]string{"-G", "1"}, map[string]string{"SLURM_NNODES": "2"}, nil, "Step requested gres=gpu:1 is less than the requested min nodes=2"},
		{nil, map[string]string{"SLURM_CPUS_PER_GPU": "2"}, nil, "Invalid generic resource (gres) specification"},
		{nil, map[string]string{"SLURM_CPUS_PER_GPU": "2", "SLURM_GPUS_PER_NODE": "1"}, &pb.StepRequest{GpusPerNode: 1}, ""},
		{[]string{"--gpus-per-task=1", "-n", "1"}, map[string]string{"SLURM_GPUS_PER_NODE": "2"}, &pb.StepRequest{Ntasks: 1, GpusPerNode: 2}, ""},
		// More tasks than the job's CPUs: refused unless -O.
		{[]string{"-n", "2"}, map[string]string{"SLURM_JOB_CPUS_PER_NODE": "1"}, nil, "More processors requested than permitted"},
		{[]string{"-n", "2", "-O"}, map[string]string{"SLURM_JOB_CPUS_PER_NODE": "1"}, &pb.StepRequest{Ntasks: 2}, ""},
		{[]string{"-n", "2", "-c", "2"}, map[string]string{"SLURM_JOB_CPUS_PER_NODE": "4"}, &pb.StepRequest{Ntasks: 2, CpusPerTask: 2}, ""},
		{[]string{"-n", "2", "-c", "2"}, map[string]string{"SLURM_JOB_CPUS_PER_NODE": "2(x2)", "SLURM_NNODES": "2"}, &pb.StepRequest{Ntasks: 2, CpusPerTask: 2}, ""},
		{[]string{"-n", "2", "-c", "2", "-N", "1"}, map[string]string{"SLURM_JOB_CPUS_PER_NODE": "2(x2)"}, nil, "More processors requested than permitted"},
	} {
		vars := map[string]string{"USER": "alice", "HOME": "/home/alice"}
		for k, v := range tc.env {
			vars[k] = v
		}
		env := testEnv("/work", vars, "")
		req, err := parseAllocation(env, tc.opts, "true")
		if err != nil {
			t.Fatalf("%q: %v", tc.opts, err)
		}
		got, err := stepRequest(env, req, 9, []string{"true"})
		if err == nil {
			err = inheritJobCounts(env, req, got)
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q %v: %v, want %q", tc.opts, tc.env, err, tc.err)
			}
			continue
		}
		w := tc.want
		if err != nil || got.GetNodes() != w.GetNodes() || got.GetNtasks() != w.GetNtasks() || got.GetNtasksPerNode() != w.GetNtasksPerNode() || got.GetCpusPerTask() != w.GetCpusPerTask() ||
			got.GetGpusPerTask() != w.GetGpusPerTask() || got.GetGpusPerNode() != w.GetGpusPerNode() {
			t.Errorf("%q %v: -N %d -n %d --ntasks-per-node %d -c %d --gpus-per-task %d --gpus-per-node %d (%v); want %v", tc.opts, tc.env, got.GetNodes(),
				got.GetNtasks(), got.GetNtasksPerNode(), got.GetCpusPerTask(), got.GetGpusPerTask(), got.GetGpusPerNode(), err, w)
		}
	}
}

const srunLab = `name: srun
seed: 4
nodes:
  - names: h100-[1-2]
    template: dgx-h100
    features: [h100]
partitions:
  - name: gpu
    nodes: h100-[1-2]
    default: true
`

// srun and salloc end to end against a lab with real agents: srun outside
// an allocation makes one, labels its tasks' output and exits with their
// highest code; srun inside a batch job's allocation runs there; salloc
// runs its command here with the allocation's variables and releases it.
func TestSrunAndSallocEndToEnd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: lab agents need root to run jobs as their owner")
	}
	lab, err := labfile.Parse("srun", []byte(srunLab))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dir := t.TempDir()
	exe, _ := os.Executable()
	c, err := cluster.Up(ctx, cluster.Options{Lab: lab, Dir: dir, Shim: []string{exe, labShimArg}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Down(context.Background()) })
	tok, err := c.Token("nobody", auth.RoleUser)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o777)
	for _, d := range []string{filepath.Dir(dir), dir, work} {
		os.Chmod(d, 0o777)
	}
	vars := map[string]string{"USER": "nobody", "PATH": "/usr/bin:/bin", client.EnvToken: tok, client.EnvController: c.Addr}
	env := testEnv(work, vars, "")

	out, errOut, code := runCLI(env, "srun", "-N2", "-A", cluster.ExemptAccount, "--mem=256M", "-l",
		"/bin/sh", "-c", "echo hello from $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME; exit $((SLURM_PROCID+2))")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(lines)
	if want := []string{"0: hello from 0 of 2 on h100-1", "1: hello from 1 of 2 on h100-2"}; !slices.Equal(lines, want) || code != 3 {
		t.Errorf("srun outside an allocation: exit %d, stdout %q, stderr %q; want exit 3 and %q", code, out, errOut, want)
	}
	if !strings.Contains(errOut, "Relinquishing job allocation") {
		t.Errorf("srun did not release its allocation: %q", errOut)
	}

	cl, err := c.Client(ctx, "nobody")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	id, err := cl.Submit(ctx, &pb.JobSpec{Name: "batch", Account: cluster.ExemptAccount, Nodes: 2, Ntasks: 2, MemPerNodeMb: 256,
		TimeLimitSeconds: 600, Script: "#!/bin/sh\nsleep 600\n", Workdir: work})
	if err != nil {
		t.Fatal(err)
	}
	waitRunning(t, cl, id)
	inside := testEnv(work, mergeVars(vars, map[string]string{"SLURM_JOB_ID": strconvU(id)}), "")
	out, errOut, code = runCLI(inside, "srun", "-n1", "sh", "-c", "echo step $SLURM_STEP_ID of job $SLURM_JOB_ID")
	if want := "step 0 of job " + strconvU(id) + "\n"; out != want || code != 0 {
		t.Errorf("srun inside job %d: exit %d, stdout %q (stderr %q), want %q", id, code, out, errOut, want)
	}
	shown, _, _ := runCLI(env, "scontrol", "show", "job", strconvU(id))
	if want := "Step=" + strconvU(id) + ".0 Name=sh State=COMPLETED ExitCode=0:0 NodeList=h100-1 NumTasks=1"; !strings.Contains(shown, want) {
		t.Errorf("scontrol show job lacks %q:\n%s", want, shown)
	}
	cl.CancelJob(ctx, id)

	// A batch script's srun finds its allocation by $SLURM_JOB_ID and runs
	// a step on every node; the script goes on with the step's status.
	srunBin := filepath.Join(work, "srun-test")
	copyExecutable(t, exe, srunBin)
	script := "#!/bin/sh\n" + srunBin + " " + srunArg + " -l sh -c 'echo batch step $SLURM_STEP_ID on $SLURMD_NODENAME'\necho srun exit $?\n"
	bid, err := cl.Submit(ctx, &pb.JobSpec{Name: "batch-srun", Account: cluster.ExemptAccount, Nodes: 2, Ntasks: 2, MemPerNodeMb: 256,
		TimeLimitSeconds: 600, Script: script, Workdir: work, Output: filepath.Join(work, "batch-srun.out"),
		Env: map[string]string{"PATH": "/usr/bin:/bin", client.EnvToken: tok, client.EnvController: c.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	if j := waitEnded(t, cl, bid); j.GetState() != "COMPLETED" || len(j.GetSteps()) != 1 || j.GetSteps()[0].GetState() != "COMPLETED" {
		t.Errorf("batch job calling srun: %s, steps %v", j.GetState(), j.GetSteps())
	}
	got, _ := os.ReadFile(filepath.Join(work, "batch-srun.out"))
	for _, want := range []string{"0: batch step 0 on h100-1", "1: batch step 0 on h100-2", "srun exit 0"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("batch output lacks %q:\n%s", want, got)
		}
	}

	gpuStepsShareNoGPU(t, cl, work, srunBin, vars)
	cpuStepsTakeTheJobsCPUs(t, cl, work, srunBin, vars)

	ptyEnv := testEnv(work, vars, "echo pty-$((6*7)); [ -t 0 ] && echo is-a-tty\nexit 3\n")
	out, errOut, code = runCLI(ptyEnv, "srun", "-N1", "--pty", "-A", cluster.ExemptAccount, "--mem=256M", "/bin/sh")
	if !strings.Contains(out, "pty-42") || !strings.Contains(out, "is-a-tty") || code != 3 {
		t.Errorf("srun --pty: exit %d, stdout %q, stderr %q; want the shell to run the input on a terminal and exit 3", code, out, errOut)
	}

	out, errOut, code = runCLI(env, "salloc", "-N1", "-A", cluster.ExemptAccount, "--mem=256M",
		"/bin/sh", "-c", "echo job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST; exit 4")
	if !strings.HasPrefix(out, "job=") || !strings.Contains(out, "nodes=h100-") || code != 4 {
		t.Errorf("salloc: exit %d, stdout %q, stderr %q; want exit 4 and the allocation's variables", code, out, errOut)
	}
	sallocRevoked(t, cl, env, work)
	jobs, err := cl.ListJobs(ctx, &pb.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.GetSpec().GetInteractive() && (j.GetState() == "RUNNING" || j.GetState() == "PENDING") {
			t.Errorf("interactive job %d is still %s after its command ended", j.GetId(), j.GetState())
		}
	}
}

// gpuStepsShareNoGPU runs three 1-GPU --exact steps at once in a 2-GPU,
// 3-CPU job, the task-farming pattern of batch scripts: the two that run
// together get different GPUs, and the third waits for one, saying so, as
// Slurm's srun. Without --exact each step would take every CPU of the job
// and they would run one at a time (see cpuStepsTakeTheJobsCPUs).
func gpuStepsShareNoGPU(t *testing.T, cl *client.Client, work, srunBin string, vars map[string]string) {
	t.Helper()
	j, out := concurrentSteps(t, cl, work, srunBin, vars, &pb.JobSpec{Name: "farm", Ntasks: 3,
		Gres: &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Count: 2}}}},
		3, "-n1 --exact --gpus-per-task=1 sh -c 'echo step $SLURM_STEP_ID gpu $SLURM_STEP_GPUS; sleep 2'")
	id := j.GetId()
	gpuOf := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		var step, gpu string
		if n, _ := fmt.Sscanf(line, "step %s gpu %s", &step, &gpu); n == 2 {
			gpuOf[step] = gpu
		}
	}
	if j.GetState() != "COMPLETED" || len(j.GetSteps()) != 3 || len(gpuOf) != 3 {
		t.Fatalf("job %d: %s, steps %v; output:\n%s", id, j.GetState(), j.GetSteps(), out)
	}
	if gpuOf["0"] == gpuOf["1"] {
		t.Errorf("steps 0 and 1 ran at once on the same GPU %s:\n%s", gpuOf["0"], out)
	}
	if !strings.Contains(out, "step creation temporarily disabled, retrying (Requested nodes are busy)") || !strings.Contains(out, "Step created for job") {
		t.Errorf("the third step did not say it waited:\n%s", out)
	}
}

func waitRunning(t *testing.T, cl *client.Client, id uint64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		j, err := cl.GetJob(context.Background(), id, false)
		if err == nil && j.GetState() == "RUNNING" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d is %s (%v), want RUNNING", id, j.GetState(), err)
		}
		time.Sleep(50 * time.Millisecond) // polling the controller, bounded by the deadline
	}
}

func mergeVars(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

func strconvU(id uint64) string { return strconv.FormatUint(id, 10) }

func waitEnded(t *testing.T, cl *client.Client, id uint64) *pb.Job {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		j, err := cl.GetJob(context.Background(), id, false)
		if err == nil && j.GetEndTime() != nil && j.GetState() != "RUNNING" && j.GetState() != "PENDING" && j.GetState() != "COMPLETING" {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d is %s (%v), want it ended", id, j.GetState(), err)
		}
		time.Sleep(50 * time.Millisecond) // polling the controller, bounded by the deadline
	}
}

// copyExecutable copies the test binary where a job's user can run it.
func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// sallocRevoked: an allocation cancelled while salloc's command runs is
// reported as revoked, and -K signals the command (SIGTERM: its input is
// no terminal), whose exit status salloc then returns.
func sallocRevoked(t *testing.T, cl *client.Client, env userEnv, work string) {
	t.Helper()
	marker := filepath.Join(work, "salloc-started")
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := runCLI(env, "salloc", "-K", "-N1", "-A", cluster.ExemptAccount, "--mem=256M", "/bin/sh", "-c",
			`trap 'echo got TERM; exit 7' TERM; echo $SLURM_JOB_ID > `+marker+`.tmp; mv `+marker+`.tmp `+marker+`; while :; do sleep 0.1; done`)
		done <- result{out, errOut, code}
	}()
	deadline := time.Now().Add(time.Minute)
	var id uint64
	for id == 0 {
		if b, err := os.ReadFile(marker); err == nil {
			id, _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		}
		if time.Now().After(deadline) {
			t.Fatal("salloc's command did not start within a minute")
		}
		time.Sleep(20 * time.Millisecond) // polling for the command's marker, not synchronising on time
	}
	if _, err := cl.CancelJob(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if !strings.Contains(r.errOut, fmt.Sprintf("Job allocation %d has been revoked", id)) || !strings.Contains(r.out, "got TERM") || r.code != 7 {
			t.Errorf("salloc -K after scancel: exit %d, stdout %q, stderr %q; want the revocation, SIGTERM to the command and its exit 7", r.code, r.out, r.errOut)
		}
	case <-time.After(time.Minute):
		t.Fatal("salloc -K did not end within a minute of its allocation's cancel")
	}
}

// cpuStepsTakeTheJobsCPUs: two steps started at once without -c or
// --exact run one after the other, the second saying it waits, as Slurm
// 22.05's do; with --overlap they run side by side.
func cpuStepsTakeTheJobsCPUs(t *testing.T, cl *client.Client, work, srunBin string, vars map[string]string) {
	t.Helper()
	for _, tc := range []struct {
		flag  string
		waits bool
	}{{"", true}, {"--overlap", false}} {
		j, out := concurrentSteps(t, cl, work, srunBin, vars, &pb.JobSpec{Name: "cpusteps", Ntasks: 2},
			2, "-n1 "+tc.flag+" sh -c 'echo step $SLURM_STEP_ID; sleep 1'")
		id := j.GetId()
		if j.GetState() != "COMPLETED" || len(j.GetSteps()) != 2 {
			t.Fatalf("srun -n1 %s twice: job %d %s, steps %v; output:\n%s", tc.flag, id, j.GetState(), j.GetSteps(), out)
		}
		if waited := strings.Contains(out, "step creation temporarily disabled"); waited != tc.waits {
			t.Errorf("srun -n1 %s twice at once: the second waited=%v, want %v; output:\n%s", tc.flag, waited, tc.waits, out)
		}
	}
}

// concurrentSteps runs a one-node batch job (spec, with the account,
// memory, limit and environment filled in) whose script starts n copies of
// "srun STEP" at once, waits for it to end and returns it with the steps'
// output, concatenated.
func concurrentSteps(t *testing.T, cl *client.Client, work, srunBin string, vars map[string]string, spec *pb.JobSpec, n int, step string) (*pb.Job, string) {
	t.Helper()
	tag := spec.GetName()
	spec.Script = fmt.Sprintf("#!/bin/sh\nfor i in $(seq %d); do %s %s %s > %s/%s.$i 2>&1 & done\nwait\n", n, srunBin, srunArg, step, work, tag)
	spec.Account, spec.Nodes, spec.MemPerNodeMb, spec.TimeLimitSeconds, spec.Workdir = cluster.ExemptAccount, 1, 256, 600, work
	spec.Env = map[string]string{"PATH": "/usr/bin:/bin", client.EnvToken: vars[client.EnvToken], client.EnvController: vars[client.EnvController]}
	id, err := cl.Submit(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	j := waitEnded(t, cl, id)
	var all strings.Builder
	for i := 1; i <= n; i++ {
		b, _ := os.ReadFile(filepath.Join(work, fmt.Sprintf("%s.%d", tag, i)))
		all.Write(b)
	}
	return j, all.String()
}

// In a job, srun --gpus-per-task needs no -n: the job gives the task
// count (the anchor ran it in a job of -N 2 as a task a node). An
// allocation of its own still needs one, as sbatch's does.
func TestGPUsPerTaskInAllocation(t *testing.T) {
	env := testEnv("/work", map[string]string{"USER": "alice", "HOME": "/home/alice"}, "")
	if _, err := parseStepOptions(env, []string{"--gpus-per-task=1"}, "true"); err != nil {
		t.Errorf("a step in a job: %v", err)
	}
	if _, err := parseAllocation(env, []string{"--gpus-per-task=1"}, "true"); err == nil || !strings.Contains(err.Error(), "explicit task count") {
		t.Errorf("an allocation of its own: %v, want the task count refused", err)
	}
}
