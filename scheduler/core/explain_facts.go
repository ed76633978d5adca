package core

import (
	"fmt"
	"strings"
	"time"
)

// shortages says what was short where: the most free on one node for
// each resource the job needs, against what it asks.
func (p *pass) shortages(ex *Explanation, sh *shape, end int64) {
	st := p.st
	bestDev, bestCPU, bestMem := -1, -1, -1
	var devFree, cpuFree int
	var memFree int64
	fitting := 0
	sh.eligible.each(func(n int) bool {
		cl := p.c.classes[p.c.nodeClass[n]]
		if f := popcount(st.freeMask[n] & sh.typeMask[cl.id] &^ sh.avoidOn(n)); f > devFree || bestDev < 0 {
			bestDev, devFree = n, f
		}
		if f := int(st.freeCPUs[n]); f > cpuFree || bestCPU < 0 {
			bestCPU, cpuFree = n, f
		}
		if f := st.freeMem[n]; f > memFree || bestMem < 0 {
			bestMem, memFree = n, f
		}
		if p.fitsNow(sh, n, end, sh.resv) == FilterOK {
			fitting++
		}
		return true
	})
	if bestDev < 0 {
		return
	}
	name := func(n int) string { return p.c.snap.Nodes[n].Name }
	typ := sh.need.gpuType
	if typ == "" {
		typ = "GPU"
	}
	if sh.need.gpus > 0 && devFree < int(sh.need.gpus) {
		ex.Facts = append(ex.Facts, fmt.Sprintf("needs %d %s on one node; the most free on one node is %d (%s)", sh.need.gpus, typ, devFree, name(bestDev)))
	}
	if cpuFree < int(sh.need.cpus) {
		ex.Facts = append(ex.Facts, fmt.Sprintf("needs %d CPUs on one node; the most free on one node is %d (%s)", sh.need.cpus, cpuFree, name(bestCPU)))
	}
	if memFree < sh.need.mem {
		ex.Facts = append(ex.Facts, fmt.Sprintf("needs %s of memory on one node; the most free on one node is %s (%s)", formatMB(sh.need.mem), formatMB(max(memFree, 0)), name(bestMem)))
	}
	if sh.nodes > 1 && fitting < int(sh.nodes) {
		ex.Facts = append(ex.Facts, fmt.Sprintf("needs %d nodes with %s free at once; %d have it now", sh.nodes, describeNeed(sh.need, sh.exclusive), fitting))
	}
}

// blockers names the higher-priority reservations holding nodes that
// would otherwise fit.
func (p *pass) blockers(ex *Explanation, sh *shape, j *Job, end int64) {
	byTag := map[int32]int{}
	var tags []int32
	sh.eligible.each(func(n int) bool {
		if r := p.fitsNow(sh, n, end, sh.resv); r != FilterHeldForHigher && r != FilterReserved {
			return true
		}
		for _, h := range p.st.holds[n] {
			if h.s >= end || h.e <= p.c.now || h.tag == sh.resv && sh.resv >= 0 {
				continue
			}
			i, ok := byTag[h.tag]
			if !ok {
				i = len(ex.Blockers)
				byTag[h.tag] = i
				tags = append(tags, h.tag)
				b := Blocker{Start: timeOf(h.s)}
				if h.tag < 0 {
					b.Job = p.plan.Decisions[-h.tag-2].Job
				}
				ex.Blockers = append(ex.Blockers, b)
			}
			if b := &ex.Blockers[i]; len(b.Nodes) == 0 || b.Nodes[len(b.Nodes)-1] != p.c.snap.Nodes[n].Name {
				b.Nodes = append(b.Nodes, p.c.snap.Nodes[n].Name)
			}
		}
		return true
	})
	for i, tag := range tags {
		b := ex.Blockers[i]
		if tag >= 0 {
			ex.Facts = append(ex.Facts, p.resvFact(tag, b))
		} else {
			ex.Facts = append(ex.Facts, fmt.Sprintf("job %d (higher priority) has resources reserved on %s from %s; this job would still be running then", b.Job, joinNames(b.Nodes), b.Start.Format(time.RFC3339)))
		}
	}
}

// whatIfs tries smaller requests against the state the job saw and
// reports the first of each kind that could start now.
func (p *pass) whatIfs(ex *Explanation, sh *shape, j *Job) {
	if sh.need.gpus > 1 {
		for g := sh.need.gpus - 1; g >= 1; g-- {
			k := sh.shapeKey
			k.need.gpus = g
			if nodes := p.tryNow(k, j); nodes != "" {
				ex.Suggestions = append(ex.Suggestions, fmt.Sprintf("with --gpus-per-node=%d it could start now on %s", g, nodes))
				break
			}
		}
	}
	for n := sh.nodes - 1; n >= 1; n-- {
		k := sh.shapeKey
		k.nodes = n
		if nodes := p.tryNow(k, j); nodes != "" {
			ex.Suggestions = append(ex.Suggestions, fmt.Sprintf("with --nodes=%d it could start now on %s", n, nodes))
			break
		}
	}
	if first := p.firstBlockingHold(sh); first > p.c.now && first < forever {
		k := sh.shapeKey
		k.limit = first - p.c.now
		if nodes := p.tryNow(k, j); nodes != "" {
			ex.Suggestions = append(ex.Suggestions, fmt.Sprintf("with --time=%s (ending before the reservation at %s) it could start now on %s",
				fmtDur(time.Duration(k.limit)*time.Second), timeOf(first).Format(time.RFC3339), nodes))
		}
	}
	for pi := range p.c.snap.Partitions {
		if int32(pi) == sh.part || contains(j.Partitions, p.c.snap.Partitions[pi].Name) {
			continue
		}
		k := sh.shapeKey
		k.part = int32(pi)
		if mt := p.c.snap.Partitions[pi].MaxTime; mt > 0 && k.limit > int64(mt/time.Second) {
			continue
		}
		if nodes := p.tryNow(k, j); nodes != "" {
			ex.Suggestions = append(ex.Suggestions, fmt.Sprintf("in partition %s it could start now on %s", p.c.snap.Partitions[pi].Name, nodes))
		}
	}
}

// tryNow reports the nodes a modified request would get now, or "".
func (p *pass) tryNow(k shapeKey, j *Job) string {
	sh := p.buildShape(k, j)
	if sh.static != "" {
		return ""
	}
	end := forever
	if sh.limit < forever {
		end = p.c.now + sh.limit
	}
	nodes, _ := p.findNodes(sh, end, sh.resv)
	if nodes == nil {
		return ""
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = p.c.snap.Nodes[n].Name
	}
	return joinNames(names)
}

// firstBlockingHold is the earliest start of a hold on a node that would
// otherwise fit the shape now.
func (p *pass) firstBlockingHold(sh *shape) int64 {
	first := forever
	sh.eligible.each(func(n int) bool {
		if p.fitsWindow(sh, n, p.c.now, p.c.now+1, sh.resv) != FilterOK {
			return true
		}
		for _, h := range p.st.holds[n] {
			if h.s > p.c.now && h.s < first && (h.tag != sh.resv || sh.resv < 0) {
				first = h.s
			}
		}
		return true
	})
	return first
}

// suggestFix handles jobs whose request a partition refuses outright.
func (p *pass) suggestFix(ex *Explanation, j *Job, r Reason) {
	pi, ok := p.c.partIdx[j.Partition]
	if !ok {
		return
	}
	part := p.c.snap.Partitions[pi]
	alt := *j
	switch r {
	case ReasonPartitionTimeLimit:
		alt.TimeLimit = part.MaxTime
		ex.Facts = append(ex.Facts, fmt.Sprintf("partition %s allows at most %s; the job asks %s", part.Name, fmtDur(part.MaxTime), fmtDur(j.TimeLimit)))
	case ReasonPartitionNodeLimit:
		alt.Nodes = min(max(j.Nodes, part.MinNodes), part.MaxNodes)
		ex.Facts = append(ex.Facts, fmt.Sprintf("partition %s allows %d to %d nodes; the job asks %d", part.Name, part.MinNodes, part.MaxNodes, max(j.Nodes, 1)))
	default:
		return
	}
	k, reason, _ := p.resolve(&alt, -1)
	if reason != "" {
		return
	}
	flag := fmt.Sprintf("--time=%s", fmtDur(alt.TimeLimit))
	if r == ReasonPartitionNodeLimit {
		flag = fmt.Sprintf("--nodes=%d", alt.Nodes)
	}
	if nodes := p.tryNow(k, &alt); nodes != "" {
		ex.Suggestions = append(ex.Suggestions, fmt.Sprintf("with %s it could start now on %s", flag, nodes))
	} else {
		ex.Suggestions = append(ex.Suggestions, fmt.Sprintf("with %s it would be eligible to run", flag))
	}
}

// resvFact names an admin reservation in a job's way and what kind it is.
func (p *pass) resvFact(tag int32, b Blocker) string {
	r := &p.c.snap.Reservations[tag]
	what := "admin reservation " + r.Name
	if r.Flags&ResvMaint != 0 {
		what = "maintenance reservation " + r.Name
	}
	fact := fmt.Sprintf("%s holds %s from %s", what, joinNames(b.Nodes), b.Start.Format(time.RFC3339))
	if len(p.c.resv[tag].slices) > 0 {
		fact = fmt.Sprintf("%s holds part of %s (%s) from %s", what, joinNames(b.Nodes), resvAmount(r), b.Start.Format(time.RFC3339))
	}
	if r.Flags&ResvMaint != 0 {
		fact += "; jobs there must end before it starts"
	}
	return fact
}

// resvAmount totals a TRES reservation's slices ("4 GPUs, 32 CPUs").
func resvAmount(r *Reservation) string {
	var gpus, cpus int
	var mem int64
	for _, sl := range r.Slices {
		gpus += len(sl.Devices)
		cpus += sl.CPUs
		mem += sl.MemoryMB
	}
	var parts []string
	if gpus > 0 {
		parts = append(parts, fmt.Sprintf("%d GPU(s)", gpus))
	}
	if cpus > 0 {
		parts = append(parts, fmt.Sprintf("%d CPUs", cpus))
	}
	if mem > 0 {
		parts = append(parts, formatMB(mem))
	}
	return strings.Join(parts, ", ")
}
