package core

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
)

// Explain errors.
var (
	ErrUnknownJob = errors.New("core: no such job")
	ErrNotPending = errors.New("core: job is not pending")
)

// Explanation answers "why is my job pending?" with the decisive facts of
// one pass, as seen at the moment the job's turn came.
type Explanation struct {
	Job       JobID
	Partition string
	Action    Action
	Reason    Reason
	Detail    string
	// Rank is the job's position in the pass (0 = first) of Pending jobs.
	Rank, Pending int
	// Ahead counts higher-priority jobs of the same partition still waiting.
	Ahead    int
	Priority policy.Breakdown
	// Need is the request per node, e.g. "2 node(s) × (8 h100, 32 CPUs, 256 GiB) for 04:00:00".
	Need string
	// Facts name what was short where, which limit or reservation blocks it.
	Facts []string
	// Nodes counts the partition's nodes by the first filter that rejected
	// them ("why not here"), most common first; FilterOK counts fitting nodes.
	Nodes []ReasonCount
	// Blockers are the reservations of higher-priority jobs in its way.
	Blockers      []Blocker
	ExpectedStart time.Time
	StartKnown    bool
	// Suggestions are request changes that would let it start now.
	Suggestions []string
	// Partitions says, for a job listing several partitions, what the
	// pass found in each, best first (nil for a one-partition job).
	Partitions []PartitionVerdict
}

// ReasonCount is how many nodes one filter rejected, with examples.
type ReasonCount struct {
	Reason   FilterReason
	Count    int
	Examples []string
}

// Blocker is a higher-priority job's reservation that keeps nodes from a job.
type Blocker struct {
	Job   JobID
	Start time.Time
	Nodes []string
}

// probe captures diagnostics for one job during a pass.
type probe struct {
	job  JobID
	done bool
	ex   Explanation
}

// Explain runs a pass and explains one pending job's outcome in it: its
// rank and priority breakdown, which resource was short where, which limit
// or reservation blocks it, when it is expected to start and what change
// to the request would let it start now. Like Schedule it is pure.
func Explain(snap Snapshot, cfg Config, now time.Time, id JobID) (Explanation, error) {
	var found *Job
	for i := range snap.Jobs {
		if snap.Jobs[i].ID == id {
			if snap.Jobs[i].State != JobPending {
				return Explanation{}, fmt.Errorf("%w: job %d is %s", ErrNotPending, id, snap.Jobs[i].State)
			}
			found = &snap.Jobs[i]
		}
	}
	if found == nil {
		return Explanation{}, fmt.Errorf("%w: %d", ErrUnknownJob, id)
	}
	p, pend, bad, err := prepare(&snap, cfg, now)
	if err != nil {
		return Explanation{}, err
	}
	p.probe = &probe{job: id}
	p.run(pend, bad)
	d, _ := p.plan.Decision(id)
	ex := p.probe.ex
	for _, pj := range pend {
		if p.c.snap.Jobs[pj.ji].ID == id {
			ex.Partitions = p.verdicts(pj)
			break
		}
	}
	ex.Job, ex.Partition, ex.Action, ex.Reason, ex.Detail = id, d.Partition, d.Action, d.Reason, d.Detail
	ex.Rank, ex.Pending, ex.Priority = d.Rank, len(p.plan.Decisions), d.Factors()
	ex.ExpectedStart, ex.StartKnown = d.ExpectedStart, d.StartKnown
	ex.Facts = append(ex.Facts, expediteFacts(found)...)
	var first *Decision
	for i := range p.plan.Decisions[:d.Rank] {
		o := &p.plan.Decisions[i]
		if o.Partition != d.Partition || !competing(o) {
			continue
		}
		ex.Ahead++
		if first == nil && o.Action == ActionReserve {
			first = o
		}
	}
	switch {
	case d.Action == ActionStart:
		ex.Facts = append(ex.Facts, fmt.Sprintf("starts now on %s", joinNames(d.Nodes)))
	case d.Action == ActionReserve:
		ex.Facts = append(ex.Facts, fmt.Sprintf("first in line: resources on %s are reserved for it from %s", joinNames(d.Nodes), d.Shadow.Format(time.RFC3339)))
	case d.Reason == ReasonPriority && first != nil:
		ex.Facts = append(ex.Facts, fmt.Sprintf("job %d is first in line in partition %s, with resources reserved on %s from %s", first.Job, first.Partition, joinNames(first.Nodes), first.Shadow.Format(time.RFC3339)))
	}
	return ex, nil
}

// competing reports whether a decision is a job waiting for resources
// (not held back by its own request, a hold or a limit).
func competing(d *Decision) bool {
	return d.Action == ActionReserve || d.Action == ActionPending && (d.Reason == ReasonResources || d.Reason == ReasonPriority)
}

// capture records, before the job is decided, what the state offers it.
func (pr *probe) capture(p *pass, d *Decision, j *Job, pj pendingJob, bad []badRequest) {
	pr.done = true
	ex := &pr.ex
	if r, _ := gate(j, p.c.now); r != "" {
		ex.Facts = append(ex.Facts, gateFact(r, j))
		return
	}
	if pj.shape < 0 {
		var r Reason
		if mi := pj.multi(); mi >= 0 {
			r = p.multis[mi].cands[0].reason
		} else {
			r = bad[pj.bad].reason
		}
		p.suggestFix(ex, j, r)
		return
	}
	sh := p.shapes[pj.shape]
	ex.Need = fmt.Sprintf("%d node(s) × (%s) for %s", sh.nodes, describeNeed(sh.need, sh.exclusive), limitText(sh.limit))
	end := forever
	if sh.limit < forever {
		end = p.c.now + sh.limit
	}
	p.nodeVerdicts(ex, sh, j, end)
	if sh.static != "" {
		return
	}
	p.shortages(ex, sh, end)
	p.blockers(ex, sh, j, end)
	p.whatIfs(ex, sh, j)
}

func gateFact(r Reason, j *Job) string {
	switch r {
	case ReasonJobHeldUser:
		return "held by its user (scontrol release to let it run)"
	case ReasonJobHeldAdmin:
		return "held by an administrator"
	case ReasonDependency:
		return "waiting for its dependencies"
	case ReasonDependencyNeverSatisfied:
		return "its dependencies can never be satisfied"
	case ReasonBeginTime:
		return "not eligible before " + j.Begin.UTC().Format(time.RFC3339)
	}
	return string(r)
}

// nodeVerdicts runs the filter chain on every node of the partition.
func (p *pass) nodeVerdicts(ex *Explanation, sh *shape, j *Job, end int64) {
	counts := map[FilterReason]*ReasonCount{}
	p.c.partNodes[sh.part].each(func(n int) bool {
		r := p.staticReason(sh, j, n)
		if r == FilterOK {
			r = p.fitsNow(sh, n, end, sh.resv)
		}
		rc := counts[r]
		if rc == nil {
			rc = &ReasonCount{Reason: r}
			counts[r] = rc
		}
		rc.Count++
		if len(rc.Examples) < 3 {
			rc.Examples = append(rc.Examples, p.c.snap.Nodes[n].Name)
		}
		return true
	})
	for _, rc := range counts {
		ex.Nodes = append(ex.Nodes, *rc)
	}
	slices.SortFunc(ex.Nodes, func(a, b ReasonCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return compareStrings(string(a.Reason), string(b.Reason))
	})
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func limitText(limit int64) string {
	if limit >= forever {
		return "no time limit"
	}
	return fmtDur(time.Duration(limit) * time.Second)
}

func joinNames(names []string) string {
	if len(names) > 8 {
		return fmt.Sprintf("%s … (%d nodes)", joinNames(names[:8]), len(names))
	}
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ","
		}
		out += n
	}
	return out
}
