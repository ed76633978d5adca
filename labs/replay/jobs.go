package replay

import (
	"fmt"
	"slices"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/trace"
	"github.com/parityhpc/parity/scheduler/core"
)

// partition is the one partition a built-in lab has.
const partition = "sim"

// mapping turns trace jobs into core jobs for one lab.
type mapping struct {
	lab       Lab
	gpus      bool  // the trace's Procs are GPUs
	perNode   int   // units (CPUs or GPUs) per node
	capacity  int   // units in the lab
	base      int64 // Unix time of trace second 0
	estimates Estimates
	exact     bool // estimates == EstimatesExact, a bool so that limit inlines
	extend    bool
	capRun    bool  // runs end at their request (Options.CapRuntimeAtRequest)
	maxRun    int64 // header MaxRuntime: the limit of jobs that state none
}

func newMapping(tr *trace.Trace, o *Options) (mapping, error) {
	m := mapping{lab: o.Lab, estimates: o.Estimates, extend: o.ExtendShortEstimates, capRun: o.CapRuntimeAtRequest, maxRun: tr.Header.MaxRuntime}
	if m.estimates == "" {
		m.estimates = EstimatesUser
	}
	if m.estimates != EstimatesUser && m.estimates != EstimatesExact {
		return m, fmt.Errorf("%w: estimates %q: want user or exact", ErrOptions, m.estimates)
	}
	m.exact = m.estimates == EstimatesExact
	m.gpus = tr.Format == trace.FormatGPUCSV || o.ProcsAsGPUs
	if m.lab == (Lab{}) {
		if m.gpus {
			return m, fmt.Errorf("%w: a GPU replay needs --lab gpu:NODESxGPUS (GPU traces do not state their capacity)", ErrOptions)
		}
		size := tr.Header.MaxProcs
		if size <= 0 {
			size = tr.Header.MaxNodes
		}
		if size <= 0 {
			return m, fmt.Errorf("%w: the trace header states neither MaxProcs nor MaxNodes; give --lab pool:N or a lab shape", ErrOptions)
		}
		m.lab = Lab{Kind: LabPool, Nodes: 1, PerNode: size}
	}
	if err := m.lab.Validate(); err != nil {
		return m, err
	}
	switch {
	case m.gpus && !m.lab.GPUs():
		return m, fmt.Errorf("%w: the jobs count GPUs but lab %s has none", ErrOptions, m.lab)
	case m.gpus:
		m.perNode = m.lab.PerNode
	case m.lab.GPUs():
		m.perNode = m.lab.PerNode * cpusPerGPU
	default:
		m.perNode = m.lab.PerNode
	}
	m.capacity = m.perNode * m.lab.Nodes
	m.base = tr.Header.UnixStartTime
	if m.base <= 0 {
		// The core reads a zero time as "unset"; any fixed origin will do.
		m.base = 1_000_000_000
	}
	return m, nil
}

// requestedSizes returns a copy of tr whose jobs are sized by their
// requested processors where the trace states them (Options.RequestedProcs);
// the caller's trace is left as it was.
func requestedSizes(tr *trace.Trace) *trace.Trace {
	out := *tr
	out.Jobs = slices.Clone(tr.Jobs)
	for i := range out.Jobs {
		if r := out.Jobs[i].RequestedProcs; r > 0 {
			out.Jobs[i].Procs = r
		}
	}
	return &out
}

// unit names what the mapping counts.
func (m *mapping) unit() string {
	if m.gpus {
		return "GPUs"
	}
	return "processors"
}

// runtime is how long the job would run unhindered: its recorded
// runtime, or under capRun at most the requested time the trace states.
func (m *mapping) runtime(j *trace.Job) int64 {
	if m.capRun && j.Requested > 0 && j.Requested < j.Runtime {
		return j.Requested
	}
	return j.Runtime
}

// limit is the time limit the scheduler sees for a job, in seconds.
// Extended estimates follow the recorded runtime, capped or not.
func (m *mapping) limit(j *trace.Job) int64 {
	if m.exact {
		return m.runtime(j)
	}
	req := j.Requested
	if req <= 0 {
		req = m.maxRun
	}
	if req <= 0 || m.extend && req < j.Runtime {
		return j.Runtime
	}
	return req
}

// duration is how long the job runs in the replay: its runtime (capped
// at its request under capRun), cut at its limit. killed says it ended
// before its recorded runtime.
func (m *mapping) duration(j *trace.Job) (run int64, killed bool) {
	run = m.runtime(j)
	if l := m.limit(j); l < run {
		return l, true
	}
	return run, run < j.Runtime
}

// nodes is how many nodes the job spans.
func (m *mapping) nodes(j *trace.Job) int {
	switch {
	case m.lab.Kind == LabPool:
		return 1
	case j.Nodes > 0:
		return j.Nodes
	}
	return (j.Procs + m.perNode - 1) / m.perNode
}

// perNodeDemand is what the job asks of each of its nodes.
func (m *mapping) perNodeDemand(j *trace.Job) int {
	n := m.nodes(j)
	return (j.Procs + n - 1) / n
}

// fits says why a job can never run on the lab, or "" when it can.
func (m *mapping) fits(j *trace.Job) string {
	n, per := m.nodes(j), m.perNodeDemand(j)
	switch {
	case j.Procs > m.capacity:
		return fmt.Sprintf("needs %d %s; the lab has %d", j.Procs, m.unit(), m.capacity)
	case n > m.lab.Nodes:
		return fmt.Sprintf("needs %d nodes; the lab has %d", n, m.lab.Nodes)
	case per > m.perNode:
		return fmt.Sprintf("needs %d %s on each of %d nodes; a node has %d", per, m.unit(), n, m.perNode)
	}
	return ""
}

// coreJob is the job as the controller would hold it at submit; the
// state machine gives it its id, in trace order (the core breaks
// priority ties by submit, then id).
func (m *mapping) coreJob(j *trace.Job) core.Job {
	cj := core.Job{
		User:      j.User,
		Account:   accountOf(j),
		Partition: partition,
		State:     core.JobPending,
		Submit:    time.Unix(m.base+j.Submit, 0),
		TimeLimit: time.Duration(m.limit(j)) * time.Second,
	}
	if m.gpus {
		cj.Nodes = j.Nodes
		cj.GRES = gres.JobRequest{PerJob: gres.Requests{{Name: "gpu", Count: int64(j.Procs)}}}
		return cj
	}
	cj.Nodes, cj.Tasks = m.nodes(j), j.Procs
	return cj
}

// held counts the units (CPUs or GPUs) an allocation takes.
func (m *mapping) held(alloc []core.NodeAlloc) int64 {
	var n int64
	for _, a := range alloc {
		if m.gpus {
			n += int64(len(a.Devices))
		} else {
			n += int64(a.CPUs.Count())
		}
	}
	return n
}
