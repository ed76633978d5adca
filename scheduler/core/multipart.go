package core

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// multiReq is a pending job that lists several partitions (sbatch -p a,b):
// one candidate per partition, each with its own shape, since partition
// defaults (time limit, memory per CPU) and node sets differ.
type multiReq struct {
	cands []cand
	// decided is set once the job's turn came past its gate, so the
	// candidates' reasons are this pass's.
	decided bool
}

// cand is one listed partition: its shape (-1 when the partition refuses
// the request outright), and what the pass found there.
type cand struct {
	name    string
	part    int32 // -1 for an unknown partition
	shape   int32
	reason  Reason
	detail  string
	start   int64 // expected start there, valid when startOK
	startOK bool
}

// competing reports whether the job waits only for room in the partition.
func (c *cand) competing() bool { return c.reason == ReasonResources || c.reason == ReasonPriority }

// resolveMulti resolves a job in each partition it lists. Candidates are
// ordered by PriorityTier (highest first), then as listed; the job's
// primary shape is its first usable candidate's (-1 when every partition
// refuses the request; decideMulti then gives each one's reason).
func (p *pass) resolveMulti(j *Job, ji int) pendingJob {
	m := multiReq{cands: make([]cand, 0, len(j.Partitions))}
	for _, name := range j.Partitions {
		if slices.ContainsFunc(m.cands, func(c cand) bool { return c.name == name }) {
			continue
		}
		cd := cand{name: name, part: -1, shape: -1}
		if pi, ok := p.partIndex(name); ok {
			cd.part = int32(pi)
		}
		if key, reason, detail := p.resolveIn(j, ji, name); reason != "" {
			cd.reason, cd.detail = reason, detail
		} else {
			cd.shape = p.shapeOf(key, j)
		}
		m.cands = append(m.cands, cd)
	}
	slices.SortStableFunc(m.cands, func(a, b cand) int { return cmp.Compare(p.tierOf(b.part), p.tierOf(a.part)) })
	pj := pendingJob{ji: int32(ji), shape: -1, qos: p.qosIndex(j.QOS), bad: -1 - int32(len(p.multis))}
	for _, cd := range m.cands {
		if cd.shape >= 0 {
			pj.shape = cd.shape
			break
		}
	}
	p.multis = append(p.multis, m)
	return pj
}

// tierOf is a partition's PriorityTier; unknown partitions sort last.
func (p *pass) tierOf(pi int32) int {
	if pi < 0 {
		return -1 << 31
	}
	return p.c.snap.Partitions[pi].PriorityTier
}

// perPartition renders each candidate's reason: "gpu: PartitionTimeLimit
// (…); debug: Resources (…)".
func perPartition(cands []cand) string {
	var b strings.Builder
	for i, cd := range cands {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(cd.name)
		b.WriteString(": ")
		b.WriteString(string(cd.reason))
		if cd.detail != "" {
			b.WriteString(" (")
			b.WriteString(cd.detail)
			b.WriteString(")")
		}
	}
	return b.String()
}

// jobIn is the job as seen in one of its partitions: limits, usage and
// preemption read Job.Partition. Only multi-partition jobs pay the copy.
func jobIn(j *Job, partition string) *Job {
	jc := *j
	jc.Partition = partition
	return &jc
}

// decideMulti settles a job listing several partitions: it starts in the
// first partition (by tier, then as listed) that has room now; otherwise
// it may preempt in the first one where it waits only for room, or it
// gets a reservation in the one where it could start earliest, and it
// blocks every partition where it waits for room, as Slurm queues such a
// job in each of them.
func (p *pass) decideMulti(d *Decision, j *Job, pj pendingJob) {
	m := &p.multis[pj.multi()]
	m.decided = true
	first := -1
	for i := range m.cands {
		cd := &m.cands[i]
		if cd.shape < 0 {
			continue
		}
		waits := p.attempt(d, jobIn(j, cd.name), p.shapes[cd.shape], pj.qos)
		if d.Action == ActionStart {
			cd.reason, cd.detail = "", ""
			return
		}
		cd.reason, cd.detail = d.Reason, d.Detail
		if waits && first < 0 {
			first = i
		}
	}
	defer p.blockAll(m)
	if first < 0 {
		// Nowhere it only waits for room: the best-placed partition's
		// reason, a competing one (Priority) before a refusal.
		best := 0
		for i := range m.cands {
			if m.cands[i].competing() {
				best = i
				break
			}
		}
		cd := &m.cands[best]
		d.Partition, d.Reason, d.Detail = cd.name, cd.reason, cd.detail
		if !cd.competing() {
			d.Detail = perPartition(m.cands)
		}
		return
	}
	for i := first; i < len(m.cands); i++ {
		cd := &m.cands[i]
		if cd.shape < 0 || !cd.competing() || cd.reason == ReasonPriority && p.cfg.Backfill == BackfillNone {
			continue
		}
		sh := p.shapes[cd.shape]
		d.Partition, d.Reason, d.Detail = cd.name, cd.reason, cd.detail
		if p.tryPreempt(d, jobIn(j, cd.name), sh, &p.parts[sh.part]) {
			return
		}
	}
	best, bestT := first, int64(0)
	found := false
	for i := first; i < len(m.cands); i++ {
		cd := &m.cands[i]
		if cd.shape < 0 || !cd.competing() {
			continue
		}
		sh := p.shapes[cd.shape]
		if !p.mayReserve(&p.parts[sh.part]) {
			continue
		}
		t, _, ok := p.earliest(sh, p.startFrom(sh), sh.resv, false)
		if !ok {
			continue
		}
		cd.start, cd.startOK = t, true
		if !found || t < bestT {
			best, bestT, found = i, t, true
		}
	}
	cd := &m.cands[best]
	d.Partition, d.Reason, d.Detail = cd.name, cd.reason, cd.detail
	if found {
		sh := p.shapes[cd.shape]
		p.reserveFor(d, jobIn(j, cd.name), sh, &p.parts[sh.part])
	}
}

// blockAll marks every partition where the job waits for room as blocked.
func (p *pass) blockAll(m *multiReq) {
	for _, cd := range m.cands {
		if cd.shape >= 0 && cd.competing() {
			p.parts[p.shapes[cd.shape].part].blocked = true
		}
	}
}

// estimateMulti gives a waiting multi-partition job the earliest expected
// start over its partitions, and that partition's reason.
func (p *pass) estimateMulti(d *Decision, pj pendingJob) {
	m := &p.multis[pj.multi()]
	if !m.decided && d.Reason != ReasonBeginTime {
		return // held, or waiting on dependencies: no estimate
	}
	best := -1
	for i := range m.cands {
		cd := &m.cands[i]
		if cd.shape < 0 || m.decided && !cd.competing() && cd.reason != ReasonReservation {
			continue
		}
		start, ok := p.expectedStart(p.shapes[cd.shape])
		if !ok {
			continue
		}
		cd.start, cd.startOK = start, true
		if best < 0 || cd.start < m.cands[best].start {
			best = i
		}
	}
	if best < 0 {
		return
	}
	cd := &m.cands[best]
	start := cd.start
	if b := unixS(p.c.snap.Jobs[pj.ji].Begin); b > start {
		start = b
	}
	d.ExpectedStart, d.StartKnown = timeOf(start), true
	if m.decided {
		d.Partition, d.Reason, d.Detail = cd.name, cd.reason, cd.detail
	}
}

// PartitionVerdict is what one pass found for a job in one of the
// partitions it lists.
type PartitionVerdict struct {
	Partition string
	// Reason is why it did not start there ("" where it started).
	Reason        Reason
	Detail        string
	ExpectedStart time.Time
	StartKnown    bool
}

// verdicts lists a multi-partition job's candidates, best first.
func (p *pass) verdicts(pj pendingJob) []PartitionVerdict {
	mi := pj.multi()
	if mi < 0 {
		return nil
	}
	m := &p.multis[mi]
	out := make([]PartitionVerdict, len(m.cands))
	for i, cd := range m.cands {
		out[i] = PartitionVerdict{Partition: cd.name, Reason: cd.reason, Detail: cd.detail, StartKnown: cd.startOK}
		if cd.startOK {
			out[i].ExpectedStart = timeOf(cd.start)
		}
	}
	return out
}
