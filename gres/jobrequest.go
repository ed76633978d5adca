package gres

import "fmt"

// JobRequest is the GRES a job asks for, in the three scopes Slurm offers:
// for the whole job (--gpus), on every node (--gres, --gpus-per-node) and for
// every task (--gpus-per-task).
type JobRequest struct {
	PerJob  Requests `json:"perJob,omitempty"`
	PerNode Requests `json:"perNode,omitempty"`
	PerTask Requests `json:"perTask,omitempty"`
}

// Flags holds the raw option values as a user typed them; empty means unset.
type Flags struct {
	GRES        string // --gres
	GPUs        string // --gpus / -G
	GPUsPerNode string // --gpus-per-node
	GPUsPerTask string // --gpus-per-task
}

// ParseFlags validates and combines the GRES-related options of a job.
// Where --gres=gpu… and --gpus-per-node are both given, --gres's count is
// what the job gets, as in Slurm 22.05.
// ntasks is the job's explicit task count (0 when unset); --gpus-per-task
// needs one unless --gpus is also given.
func ParseFlags(f Flags, ntasks int) (JobRequest, error) {
	var jr JobRequest
	var err error
	if jr.PerNode, err = ParseGRES(f.GRES); err != nil {
		return JobRequest{}, err
	}
	if f.GPUsPerNode != "" {
		perNode, err := ParseGPUs("--gpus-per-node", f.GPUsPerNode)
		if err != nil {
			return JobRequest{}, err
		}
		if err := gresOverGPUsPerNode(f, jr.PerNode, perNode); err != nil {
			return JobRequest{}, err
		}
		if jr.PerNode.Count("gpu") == 0 {
			jr.PerNode = append(jr.PerNode, perNode...)
		}
	}
	if jr.PerJob, err = ParseGPUs("--gpus", f.GPUs); err != nil {
		return JobRequest{}, err
	}
	if jr.PerTask, err = ParseGPUs("--gpus-per-task", f.GPUsPerTask); err != nil {
		return JobRequest{}, err
	}
	if len(jr.PerTask) > 0 && ntasks <= 0 && len(jr.PerJob) == 0 {
		return JobRequest{}, &SyntaxError{Field: "--gpus-per-task", Value: f.GPUsPerTask,
			Reason: "needs an explicit task count (-n/--ntasks) or --gpus"}
	}
	return jr, nil
}

// IsZero reports whether the job asks for no GRES at all.
func (jr JobRequest) IsZero() bool {
	return len(jr.PerJob) == 0 && len(jr.PerNode) == 0 && len(jr.PerTask) == 0
}

// TypedCount is a number of devices of one type ("" means any type).
type TypedCount struct {
	Type  string
	Count int64
}

// PerNodeGPUs returns the GPUs one node must provide given the job's node
// and per-node task counts: per-node terms plus per-task terms multiplied by
// tasks on that node. Per-job terms are spread by the scheduler and are not
// included.
func (jr JobRequest) PerNodeGPUs(tasksPerNode int) []TypedCount {
	byType := map[string]int64{}
	var order []string
	add := func(t string, n int64) {
		if _, ok := byType[t]; !ok {
			order = append(order, t)
		}
		byType[t] += n
	}
	for _, r := range jr.PerNode {
		if r.Name == "gpu" {
			add(r.Type, r.Count)
		}
	}
	for _, r := range jr.PerTask {
		add(r.Type, r.Count*int64(max(tasksPerNode, 1)))
	}
	out := make([]TypedCount, 0, len(order))
	for _, t := range order {
		if byType[t] > 0 {
			out = append(out, TypedCount{Type: t, Count: byType[t]})
		}
	}
	return out
}

// gresOverGPUsPerNode checks --gpus-per-node beside --gres's GPU terms:
// Slurm 22.05 takes both (scontrol shows TresPerNode=gres:gpu:1,gres:gpu:3)
// and allocates what --gres asks, whichever comes first, but refuses a typed
// count beside an untyped one ("Invalid GRES specification (with and without
// type identification)").
func gresOverGPUsPerNode(f Flags, gresTerms, perNode Requests) error {
	typed := func(rs Requests) (some, untyped bool) {
		for _, r := range rs {
			if r.Name == "gpu" {
				some, untyped = some || r.Type != "", untyped || r.Type == ""
			}
		}
		return some, untyped
	}
	gTyped, gUntyped := typed(gresTerms)
	if !gTyped && !gUntyped {
		return nil
	}
	nTyped, nUntyped := typed(perNode)
	if gTyped && nUntyped || gUntyped && nTyped {
		return &SyntaxError{Field: "--gpus-per-node", Value: f.GPUsPerNode,
			Reason: fmt.Sprintf("invalid GRES specification (with and without type identification): --gres=%s", f.GRES)}
	}
	return nil
}
