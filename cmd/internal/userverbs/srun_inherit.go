package userverbs

import (
	"fmt"
	"strconv"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// What a step started inside an existing job takes from that job's
// environment where srun's own options are silent, and what it refuses
// against what the job holds, as Slurm 22.05's srun does.

// inheritJobCounts gives a step in an existing job the counts srun reads
// from the job's environment where its own options are silent, as Slurm
// 22.05's srun does (seen on the anchor): SLURM_NTASKS as -n, also beside
// srun's own -N,
// SLURM_NTASKS_PER_NODE as --ntasks-per-node, and SRUN_CPUS_PER_TASK as -c
// (22.05's srun no longer reads SLURM_CPUS_PER_TASK). sbatch's job sets
// SLURM_NTASKS only for a task count some option gave, so a job of -N 2
// alone still runs one task a node.
func inheritJobCounts(env userEnv, req *jobspec.Request, r *pb.StepRequest) error {
	given := func(field string) bool { return givenOption(req, field) }
	read := func(name string) (int32, bool, error) {
		v := env.getenv(name)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, false, fmt.Errorf("$%s=%q: want a positive count", name, v)
		}
		return int32(n), true, nil
	}
	if !given("ntasks") && r.Ntasks == 0 {
		n, ok, err := read("SLURM_NTASKS")
		if err != nil {
			return err
		}
		if ok {
			r.Ntasks = n
			// The inherited -n wins over srun's own --ntasks-per-node
			// where they disagree on the job's nodes (the anchor ran
			// --ntasks-per-node=1 in a 1-node, 2-task job as 2 tasks).
			if nodes, known, _ := read("SLURM_NNODES"); known && r.NtasksPerNode > 0 {
				if r.Nodes > 0 {
					nodes = min(r.Nodes, nodes)
				}
				if r.NtasksPerNode*nodes < n {
					r.NtasksPerNode = 0
				}
			}
		}
	}
	if !given("ntasksPerNode") && r.NtasksPerNode == 0 {
		n, ok, err := read("SLURM_NTASKS_PER_NODE")
		if err != nil {
			return err
		}
		if ok {
			r.NtasksPerNode = n
		}
	}
	if !given("cpusPerTask") && r.CpusPerTask == 0 {
		n, ok, err := read("SRUN_CPUS_PER_TASK")
		if err != nil {
			return err
		}
		if ok {
			r.CpusPerTask = n
		}
	}
	if given("cpusPerTask") && r.Ntasks == 0 && r.NtasksPerNode == 0 {
		if err := tasksFromCPUs(env.getenv("SLURM_JOB_CPUS_PER_NODE"), r); err != nil {
			return err
		}
	}
	return inheritGPUs(env, req, r)
}

// inheritGPUs gives the step the GPU options srun reads from the job's
// environment where its own are silent, as Slurm 22.05's srun does:
// SLURM_GPUS_PER_TASK as --gpus-per-task (so each task is bound to its
// own, as the anchor's steps in a job of --gpus-per-task=1 were) and
// SLURM_GPUS_PER_NODE as --gpus-per-node (beside srun's own -G, which it
// outweighs there). It refuses in Slurm's words the steps the anchor's
// slurmctld refused: --cpus-per-gpu (the job's SLURM_CPUS_PER_GPU) with
// no GPU asked, and a -G count below the step's node count.
func inheritGPUs(env userEnv, req *jobspec.Request, r *pb.StepRequest) error {
	given := func(field string) bool { return givenOption(req, field) }
	for _, v := range []struct {
		field, name string
		to          *int32
	}{{"gpusPerTask", "SLURM_GPUS_PER_TASK", &r.GpusPerTask}, {"gpusPerNode", "SLURM_GPUS_PER_NODE", &r.GpusPerNode}} {
		if given(v.field) || env.getenv(v.name) == "" {
			continue
		}
		n, err := gpuCount("$"+v.name, env.getenv(v.name))
		if err != nil {
			return err
		}
		*v.to = n
		if v.field == "gpusPerNode" && given("gpusPerTask") {
			// The job's GPUs per node outweigh srun's own --gpus-per-task,
			// and no per-task binding follows (the anchor's srun
			// --gpus-per-task=1 in a job of --gpus-per-node=2 ran one
			// task on both GPUs, without SLURMD_TRES_BIND).
			r.GpusPerTask = 0
		}
	}
	gresError := fmt.Errorf("Unable to create step for job %d: Invalid generic resource (gres) specification", r.GetJobId())
	cpusPerGPU := given("cpusPerGpu") || env.getenv("SLURM_CPUS_PER_GPU") != ""
	if cpusPerGPU && r.GpusPerNode == 0 && r.GpusPerTask == 0 {
		return gresError
	}
	if err := checkStepCPUs(env, req, r); err != nil {
		return err
	}
	if given("gpus") {
		total, _ := gpuCount("--gpus", req.GPU.GPUs)
		nodes := r.Nodes
		if nodes == 0 {
			if n, err := strconv.Atoi(env.getenv("SLURM_NNODES")); err == nil {
				nodes = int32(n)
			}
		}
		if total < nodes {
			return fmt.Errorf("Step requested gres=gpu:%d is less than the requested min nodes=%d; %w", total, nodes, gresError)
		}
	}
	return nil
}

// checkStepCPUs refuses, in Slurm's words, a step whose tasks need more
// CPUs than the job holds on the step's nodes (the anchor's srun -n 2 in
// a job of one CPU), unless -O/--overcommit allows it.
func checkStepCPUs(env userEnv, req *jobspec.Request, r *pb.StepRequest) error {
	perNode := env.getenv("SLURM_JOB_CPUS_PER_NODE")
	if r.Ntasks == 0 || perNode == "" || req.Sources["extra.overcommit"] != "" || env.getenv("SLURM_OVERCOMMIT") != "" {
		return nil
	}
	cpus, err := jobspec.ParseRunLength(perNode)
	if err != nil {
		return fmt.Errorf("$SLURM_JOB_CPUS_PER_NODE: %w", err)
	}
	if n := int(r.Nodes); n > 0 && n < len(cpus) {
		cpus = cpus[:n]
	}
	have := 0
	for _, c := range cpus {
		have += c
	}
	if int(r.Ntasks)*int(max(r.CpusPerTask, 1)) > have {
		return fmt.Errorf("Unable to create step for job %d: More processors requested than permitted", r.GetJobId())
	}
	return nil
}

// tasksFromCPUs gives a step whose -c no task count accompanies as many
// tasks as the job's CPUs on its nodes hold, as Slurm 22.05's srun does
// (the anchor ran srun -c 1 in a job of 2 CPUs as 2 tasks, in -N 2 -c 4
// as 8). perNode is the job's SLURM_JOB_CPUS_PER_NODE.
func tasksFromCPUs(perNode string, r *pb.StepRequest) error {
	if perNode == "" || r.CpusPerTask <= 0 {
		return nil
	}
	cpus, err := jobspec.ParseRunLength(perNode)
	if err != nil {
		return fmt.Errorf("$SLURM_JOB_CPUS_PER_NODE: %w", err)
	}
	if n := int(r.Nodes); n > 0 && n < len(cpus) {
		cpus = cpus[:n]
	}
	var tasks int32
	for _, c := range cpus {
		tasks += max(int32(c)/r.CpusPerTask, 1)
	}
	r.Ntasks = tasks
	return nil
}

// givenOption reports whether srun's own options gave field (a JSON name),
// not a default or a count derived from others.
func givenOption(req *jobspec.Request, field string) bool {
	s := req.Sources[field]
	return s != "" && s != jobspec.SourceDefault && !strings.HasPrefix(s, "derived")
}
