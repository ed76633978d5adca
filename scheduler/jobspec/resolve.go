package jobspec

import (
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/gres"
)

// finish applies the defaults and derivations sbatch makes without cluster
// knowledge, resolves the GRES request and validates option combinations.
func (b *builder) finish(env map[string]string) error {
	r := b.req
	b.defaultName()
	if err := b.resolveMem(); err != nil {
		return err
	}
	if err := b.resolveDependency(); err != nil {
		return err
	}
	if err := b.deriveNodes(); err != nil {
		return err
	}
	b.deriveTasks()
	if err := b.resolveGRES(); err != nil {
		return err
	}
	if r.NTasksPerGPU > 0 && !r.Explicit("ntasks") && r.GRES.PerJob.Count("gpu") > 0 {
		r.NTasks = r.NTasksPerGPU * int(r.GRES.PerJob.Count("gpu"))
		r.Sources["ntasks"] = "derived from --ntasks-per-gpu"
	}
	if err := b.validate(); err != nil {
		return err
	}
	b.defaultFiles()
	if r.WorkDir == "" {
		r.WorkDir, r.Sources["workDir"] = r.SubmitDir, SourceDefault
	} else {
		r.WorkDir = joinDir(r.SubmitDir, r.WorkDir)
	}
	r.Env = r.Export.Apply(env)
	if r.GPU.GPUBind != "" && r.Env != nil {
		// An output variable, as sbatch sets it; srun in the job reads it.
		r.Env["SLURM_GPU_BIND"] = r.GPU.GPUBind
	}
	return nil
}

func (b *builder) defaultName() {
	r := b.req
	if r.Name != "" {
		return
	}
	switch {
	case r.Wrap != "":
		r.Name = "wrap"
	case r.ScriptPath != "":
		r.Name = path.Base(r.ScriptPath)
	default:
		r.Name = "sbatch"
	}
	r.Sources["name"] = SourceDefault
}

// deriveNodes makes the node count cover -w (a required node list) and
// trims it to an explicit task count, as sbatch does.
func (b *builder) deriveNodes() error {
	r := b.req
	if n := len(r.NodeList); n > 0 {
		switch {
		case r.Nodes.IsZero():
			r.Nodes = NodeRange{Min: n, Max: n}
			r.Sources["nodes"] = "derived from --nodelist"
		case r.Nodes.Max < n:
			return &OptionError{Option: "--nodelist", Value: CompressHostlist(r.NodeList), Source: r.Sources["nodeList"],
				Reason: "names " + strconv.Itoa(n) + " nodes, more than the maximum node count " + strconv.Itoa(r.Nodes.Max) + " (--nodes)"}
		case r.Nodes.Min < n:
			r.Nodes.Min = n
		}
	}
	for _, h := range r.Exclude {
		if _, found := slices.BinarySearch(r.NodeList, h); found {
			return &OptionError{Option: "--exclude", Value: h, Source: r.Sources["exclude"], Reason: "node is also required by --nodelist"}
		}
	}
	if r.Explicit("ntasks") && r.NTasks < r.Nodes.Min {
		b.warnf("can't run %d processes on %d nodes, setting nnodes to %d", r.NTasks, r.Nodes.Min, r.NTasks)
		r.Nodes.Min = r.NTasks
		r.Nodes.Max = max(r.Nodes.Max, r.Nodes.Min)
	}
	b.deriveGPUNodes()
	return nil
}

// deriveGPUNodes gives a job without -N or -w the node count its GPUs
// imply: --gpus (or -n times --gpus-per-task, or -n over
// --ntasks-per-gpu) over the GPUs per node
// (--gpus-per-node or --gres=gpu). slurmctld 22.05 fixes it so, after
// sbatch's own trimming: on the anchor -G 2 --gpus-per-node=1 ran on
// n[1-2] with a GPU each (NumNodes=2-2, also with -n 1), where one node
// with both GPUs would break --gpus-per-node.
func (b *builder) deriveGPUNodes() {
	r := b.req
	if !r.Nodes.IsZero() || b.nodesGivenZero() {
		return
	}
	perNode := max(gpuCount(r.GPU.GPUsPerNode, false), gpuCount(r.GPU.GRES, true))
	total := gpuCount(r.GPU.GPUs, false)
	switch {
	case total > 0 || !r.Explicit("ntasks"):
	case r.GPU.GPUsPerTask != "":
		total = r.NTasks * gpuCount(r.GPU.GPUsPerTask, false)
	case r.NTasksPerGPU > 0:
		// The anchor: -n 4 --ntasks-per-gpu=2 --gpus-per-node=1 on n[1-2].
		total = (r.NTasks + r.NTasksPerGPU - 1) / r.NTasksPerGPU
	}
	if perNode == 0 || total <= perNode || total%perNode != 0 {
		return
	}
	n := total / perNode
	r.Nodes, r.Sources["nodes"] = NodeRange{Min: n, Max: n}, "derived from --gpus"
}

// nodesGivenZero reports -N 0, which keeps the job without a node count.
func (b *builder) nodesGivenZero() bool { return b.req.GivenEmpty("nodes") }

// deriveTasks sets the task count when -n was not given: tasks per GPU
// times the GPUs asked for (Slurm: --gpus=h100:2 --ntasks-per-gpu=2 is
// NumTasks=4), tasks per node times nodes, --gpus over --gpus-per-task,
// or one per node.
func (b *builder) deriveTasks() {
	r := b.req
	if r.Explicit("ntasks") {
		return
	}
	nodes := max(r.Nodes.Min, 1)
	gpus := gpuCount(r.GPU.GPUs, false)
	if gpus == 0 {
		gpus = max(gpuCount(r.GPU.GPUsPerNode, false), gpuCount(r.GPU.GRES, true)) * nodes
	}
	if r.NTasksPerGPU > 0 && gpus > 0 {
		r.NTasks, r.Sources["ntasks"] = gpus*r.NTasksPerGPU, "derived from --ntasks-per-gpu"
		return
	}
	if r.NTasksPerNode > 0 {
		r.NTasks, r.Sources["ntasks"] = nodes*r.NTasksPerNode, "derived from --ntasks-per-node"
		return
	}
	// --gpus over --gpus-per-task: the anchor ran -G 4 --gpus-per-task=2
	// as two tasks (NumTasks=2, sbatch --test-only: 2 processors).
	if job, per := gpuCount(r.GPU.GPUs, false), gpuCount(r.GPU.GPUsPerTask, false); job > 0 && per > 0 && job%per == 0 {
		r.NTasks, r.Sources["ntasks"] = job/per, "derived from --gpus-per-task"
		return
	}
	r.NTasks, r.Sources["ntasks"] = nodes, SourceDefault
}

// taskCountForGRES is the task count --gpus-per-task may rely on: -n, or
// one sbatch 22.05 derives from a fixed node count (-N 2, -N 1 with
// --ntasks-per-node=2, or --ntasks-per-node alone on one node); with a node
// range (-N 1-2) there is none. Each was seen on the anchor: --gpus-per-task=1
// with -N 2 was taken with NumTasks=2, with -N 1-2 or nothing else refused.
func (b *builder) taskCountForGRES() int {
	r := b.req
	if b.opts.InAllocation {
		return max(r.NTasks, 1)
	}
	fixed := r.Nodes.Max == r.Nodes.Min
	if r.Explicit("ntasks") || fixed && (r.NTasksPerNode > 0 || r.Explicit("nodes")) {
		return r.NTasks
	}
	return 0
}

// optionField maps an option named in a gres error to its Sources key.
func optionField(option string) string {
	switch option {
	case "--gpus-per-node":
		return "gpusPerNode"
	case "--gpus-per-task":
		return "gpusPerTask"
	}
	return strings.TrimPrefix(option, "--")
}

func (b *builder) resolveGRES() error {
	r := b.req
	jr, err := gres.ParseFlags(gres.Flags{GRES: r.GPU.GRES, GPUs: r.GPU.GPUs, GPUsPerNode: r.GPU.GPUsPerNode, GPUsPerTask: r.GPU.GPUsPerTask}, b.taskCountForGRES())
	if err != nil {
		oe := &OptionError{Err: err}
		var se *gres.SyntaxError
		if errors.As(err, &se) {
			oe.Option, oe.Value, oe.Source, oe.Reason = se.Field, se.Value, r.Sources[optionField(se.Field)], se.Reason
			if se.Term != "" && se.Term != se.Value {
				oe.Reason = "term " + strconv.Quote(se.Term) + ": " + se.Reason
			}
		}
		return oe
	}
	r.GRES = jr
	if r.GPU.GPUsPerSocket != "" {
		if _, err := gres.ParseGPUs("--gpus-per-socket", r.GPU.GPUsPerSocket); err != nil {
			return &OptionError{Option: "--gpus-per-socket", Value: r.GPU.GPUsPerSocket, Source: r.Sources["gpusPerSocket"], Err: err}
		}
	}
	return nil
}

// validate checks option combinations Slurm refuses whatever the cluster.
func (b *builder) validate() error {
	r := b.req
	conflict := func(opt, value, field, why string) error {
		return &OptionError{Option: opt, Value: value, Source: r.Sources[field], Reason: why}
	}
	if r.NTasksPerGPU > 0 {
		v := strconv.Itoa(r.NTasksPerGPU)
		switch {
		case r.GPU.GPUsPerTask != "":
			return conflict("--ntasks-per-gpu", v, "ntasksPerGpu", "cannot be used with --gpus-per-task")
		case r.GPU.GPUsPerSocket != "":
			return conflict("--ntasks-per-gpu", v, "ntasksPerGpu", "cannot be used with --gpus-per-socket")
		case r.NTasksPerNode > 0:
			return conflict("--ntasks-per-gpu", v, "ntasksPerGpu", "cannot be used with --ntasks-per-node")
		case !r.GPU.asksGPUs() && !(r.Explicit("nodes") && r.Nodes.Max == r.Nodes.Min) && !r.Explicit("ntasks"):
			// A node range is no count here (anchor: -N 2 taken, -N 2-4 refused).
			return conflict("--ntasks-per-gpu", v, "ntasksPerGpu", "needs a GPU request (--gpus, --gres=gpu, --gpus-per-node...) or a fixed node or task count (-N, -n)")
		}
	}
	if r.GPU.GPUsPerSocket != "" && r.Extra["sockets-per-node"] == "" {
		return conflict("--gpus-per-socket", r.GPU.GPUsPerSocket, "gpusPerSocket", "requires --sockets-per-node")
	}
	if r.CPUsPerGPU > 0 && r.Explicit("cpusPerTask") {
		return conflict("--cpus-per-gpu", strconv.Itoa(r.CPUsPerGPU), "cpusPerGpu", "cannot be used with --cpus-per-task")
	}
	if r.TimeMin > 0 && r.TimeLimit > 0 && r.TimeMin > r.TimeLimit {
		return conflict("--time-min", r.TimeMin.String(), "timeMin", "is longer than --time="+r.TimeLimit.String())
	}
	if !r.Begin.IsZero() && !r.Deadline.IsZero() && r.Deadline.Before(r.Begin) {
		return conflict("--deadline", FormatTime(r.Deadline, nil), "deadline", "is before --begin="+FormatTime(r.Begin, nil))
	}
	if err := b.checkGPUCounts(); err != nil {
		return err
	}
	if r.Mem.Per == MemPerGPU && !r.GPU.asksGPUs() && r.NTasksPerGPU == 0 {
		// --ntasks-per-gpu implies GPUs to sbatch: it takes the two
		// together with no GPU option (seen on the anchor).
		return conflict("--mem-per-gpu", FormatMemory(r.Mem.MB), "mem", "no GPU is requested (--gpus, --gres=gpu, --gpus-per-node...)")
	}
	if typed, untyped := r.GPU.typedAndUntyped(); typed != "" && untyped != "" {
		return conflict(typed, "", "", "names a GPU type and "+untyped+" does not: give the type everywhere or nowhere (Slurm: with and without type identification)")
	}
	if l := r.Extra["licenses"]; l != "" {
		// Parity defines no licenses, and Slurm refuses any on a
		// cluster that defines none.
		return conflict("--licenses", l, "extra.licenses", "invalid license specification: the cluster defines no licenses")
	}
	return nil
}

// asksGPUs reports whether any option requests GPUs.
func (g GPUOptions) asksGPUs() bool {
	return g.GPUs != "" || g.GPUsPerNode != "" || g.GPUsPerTask != "" || g.GPUsPerSocket != "" || gresNamesGPU(g.GRES)
}

func gresNamesGPU(gres string) bool {
	for _, item := range strings.Split(gres, ",") {
		if name, _, _ := strings.Cut(strings.TrimSpace(item), ":"); name == "gpu" {
			return true
		}
	}
	return false
}

// typedAndUntyped names one GPU option that gives a type (h100:2) and
// one that does not (2), which Slurm refuses together; "" for none.
func (g GPUOptions) typedAndUntyped() (typed, untyped string) {
	note := func(opt string, hasType bool) {
		switch {
		case hasType && typed == "":
			typed = opt
		case !hasType && untyped == "":
			untyped = opt
		}
	}
	for _, o := range []struct{ opt, v string }{{"--gpus", g.GPUs}, {"--gpus-per-node", g.GPUsPerNode},
		{"--gpus-per-task", g.GPUsPerTask}, {"--gpus-per-socket", g.GPUsPerSocket}} {
		if o.v != "" {
			note(o.opt, strings.Contains(o.v, ":"))
		}
	}
	for _, item := range strings.Split(g.GRES, ",") {
		parts := strings.Split(strings.TrimSpace(item), ":")
		if parts[0] != "gpu" {
			continue
		}
		// gpu, gpu:2 untyped; gpu:h100, gpu:h100:2 typed.
		hasType := len(parts) == 3 || len(parts) == 2 && !isNumber(parts[1])
		note("--gres", hasType)
	}
	return typed, untyped
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// defaultFiles applies the output defaults: slurm-%j.out (slurm-%A_%a.out
// for arrays) in the working directory, stderr with stdout.
func (b *builder) defaultFiles() {
	r := b.req
	if r.Output == "" {
		r.Output, r.Sources["output"] = "slurm-%j.out", SourceDefault
		if r.Array != nil {
			r.Output = "slurm-%A_%a.out"
		}
	}
	if r.Error == "" {
		r.Error, r.Sources["error"] = r.Output, "derived from --output"
	}
}
