package core

import (
	"fmt"
	"time"

	"github.com/parityhpc/parity/topology"
)

// pass is one scheduling pass: the static cluster view, the dynamic state
// and per-pass caches and scratch space (reused so the hot loop does not
// allocate per job).
type pass struct {
	c         *cluster
	cfg       Config
	st        *state
	topo      topoIndex
	shapes    []*shape
	shapeIdx  shapeIndex
	statics   map[staticKey]bitset
	staticErr map[staticKey]string
	usage     *Usage
	pre       preemptState
	qos       map[string]int
	names     names
	parts     []partState
	stats     Stats
	plan      *Plan
	probe     *probe
	prio      []jobPrio  // per pending job, indexed like the pending list
	multis    []multiReq // jobs that list several partitions
	order     []int32    // pending list indices in pass order
	// releaseMemo is set while expected starts are computed (see memoStart).
	releaseMemo map[releaseKey][]fitStep
	// scratch
	pick, fit []int32
	quota     []int
	gen       uint32
	fitGen    []uint32
	capGen    []uint32
	scratch   []capacity
	ivs       []ivEvent
	cands     []int64
}

// partState is what the pass knows about a partition so far.
type partState struct {
	blocked  bool  // a higher-priority job in it could not start
	reserved int   // reservations made for its jobs
	shadow   int64 // start of its first reservation
}

// pendingJob is the compact per-pending-job record of a pass.
type pendingJob struct {
	ji    int32 // index in Snapshot.Jobs
	shape int32 // -1 when the request itself is refused
	// bad indexes pass.bad when shape < 0; for a job listing several
	// partitions it is -1-i for pass.multis[i] (shape is then its first
	// usable one). Packing both keeps the record 16 bytes: the pass reads
	// it in random order, so its size shows in the 100k-job pass.
	bad int32
	qos int32 // index into Snapshot.QOS, -1 when undefined
}

// multi is the job's index in pass.multis, or -1 for a one-partition job.
func (pj pendingJob) multi() int32 {
	if pj.bad < 0 {
		return -1 - pj.bad
	}
	return -1
}

// names resolves partition and QOS names, remembering the last hit:
// consecutive jobs usually name the same ones, and a string compare is
// cheaper than hashing it again.
type names struct {
	lastPart, lastQOS     string
	lastPartIdx, lastQOSi int
	partOK, qosOK         bool
}

func (p *pass) partIndex(name string) (int, bool) {
	if name != p.names.lastPart || p.names.lastPartIdx < 0 {
		i, ok := p.c.partIdx[name]
		p.names.lastPart, p.names.lastPartIdx, p.names.partOK = name, i, ok
	}
	return p.names.lastPartIdx, p.names.partOK
}

func (p *pass) qosIndex(name string) int32 {
	if name != p.names.lastQOS || p.names.lastQOSi == 0 {
		i, ok := p.qos[name]
		if !ok {
			i = -1
		}
		p.names.lastQOS, p.names.lastQOSi, p.names.qosOK = name, i+1, ok
	}
	return int32(p.names.lastQOSi - 1)
}

// Schedule runs one pass over the snapshot at time now and returns the
// plan. It is a pure function of its arguments: it reads no clock, starts
// no goroutine and does no I/O, and the same inputs give the same plan.
// A config that fails Validate schedules nothing; the plan's Warnings say why.
func Schedule(snap Snapshot, cfg Config, now time.Time) Plan {
	p, pend, bad, err := prepare(&snap, cfg, now)
	if err != nil {
		return Plan{Now: now, Warnings: []string{err.Error()}}
	}
	p.run(pend, bad)
	return *p.plan
}

func normalise(cfg Config) Config {
	if cfg.Backfill == "" {
		cfg.Backfill = BackfillEASY
	}
	if cfg.ReservePerPartition == 0 {
		cfg.ReservePerPartition = 1
	}
	return cfg
}

// prepare builds the pass: cluster view, running jobs applied, admin
// reservations held, pending jobs resolved to shapes and ranked.
func prepare(snap *Snapshot, cfg Config, now time.Time) (*pass, []pendingJob, []badRequest, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, nil, err
	}
	cfg = normalise(cfg)
	c := newCluster(snap, cfg, now)
	p := &pass{c: c, cfg: cfg, st: newState(c), topo: newTopoIndex(snap.Switches), shapeIdx: newShapeIndex(),
		statics: map[staticKey]bitset{}, staticErr: map[staticKey]string{}, usage: &Usage{}, qos: map[string]int{},
		parts: make([]partState, len(snap.Partitions)), plan: &Plan{Now: now},
		fitGen: make([]uint32, c.n), capGen: make([]uint32, c.n), scratch: make([]capacity, c.n)}
	p.quota = make([]int, snap.Switches.Len())
	p.usage.logging = len(cfg.Limits) > 0
	track := p.usage.logging
	for i, q := range snap.QOS {
		p.qos[q.Name] = i
		track = track || q.MaxGPUsPerUser > 0
	}
	if track {
		p.usage.track()
	}
	p.applyRunning()
	p.st.finishInit()
	p.holdAdminReservations()
	pend, bad := p.resolveAll()
	p.rank(pend)
	return p, pend, bad, nil
}

// applyRunning takes what running jobs hold out of the free state.
func (p *pass) applyRunning() {
	c := p.c
	p.sizeReleases()
	var buf cpuBits
	for ji := range c.snap.Jobs {
		j := &c.snap.Jobs[ji]
		if j.State != JobRunning {
			continue
		}
		p.stats.Running++
		end := forever
		if limit := p.runningLimit(j); limit > 0 {
			end = max(unixS(j.Start)+int64(limit/time.Second), c.now+1)
		}
		if pe := unixS(j.PreemptEnd); pe > 0 {
			// In its preemption grace time: gone by then.
			end = max(min(end, pe), c.now+1)
		}
		t := Tally{Jobs: 1, GPUType: RequestedGPUType(j.GRES)}
		for _, a := range j.Alloc {
			i, ok := c.nodeIdx[a.Node]
			if !ok || c.nodeClass[i] < 0 {
				c.warnf("running job %d holds unknown node %q", j.ID, a.Node)
				continue
			}
			n := int(i)
			nd := &c.snap.Nodes[n]
			var mask uint64
			for _, u := range a.Devices {
				if d := deviceIndex(nd, u); d >= 0 {
					mask |= 1 << uint(d)
				} else {
					c.warnf("running job %d holds unknown device %q on %s", j.ID, u, a.Node)
				}
			}
			buf = cpuBitsOf(buf, a.CPUs, c.classes[c.nodeClass[n]].cpuWords)
			cpus, held := buf, buf.count()
			if free := p.st.cpus(n); overlaps(free, cpus) != held || p.st.freeMask[n]&mask != mask&^c.drained[n] {
				c.warnf("running job %d overlaps another allocation on %s", j.ID, a.Node)
			}
			p.st.take(n, cpus, a.MemoryMB, mask, end, int32(ji))
			t.Nodes++
			t.CPUs += held
			t.GPUs += popcount(mask)
			t.MemMB += a.MemoryMB
		}
		p.usage.add(j, t)
	}
}

// sizeReleases carves every node's release list out of one arena, sized
// by the running allocations on it, so applying thousands of running jobs
// does not allocate per node.
func (p *pass) sizeReleases() {
	c := p.c
	count := make([]int32, c.n)
	total := 0
	for ji := range c.snap.Jobs {
		if c.snap.Jobs[ji].State != JobRunning {
			continue
		}
		for _, a := range c.snap.Jobs[ji].Alloc {
			if i, ok := c.nodeIdx[a.Node]; ok {
				count[i]++
				total++
			}
		}
	}
	arena := make([]release, total)
	off := 0
	for n, k := range count {
		p.st.rels[n] = arena[off : off : off+int(k)]
		off += int(k)
	}
}

// cpuBitsOf writes the members of set among the node's CPUs into buf,
// a word at a time, up to the last word set spans: on a wide node (a
// replay's flat pool of thousands of processors) a job's few CPUs are
// then a few words, not the node's.
func cpuBitsOf(buf cpuBits, set topology.CPUSet, within []uint64) cpuBits {
	n := min(len(within), set.WordLen())
	if cap(buf) < n {
		buf = make(cpuBits, n, len(within))
	}
	buf = buf[:n]
	for w := range buf {
		buf[w] = within[w] & set.Word(w)
	}
	return buf
}

func overlaps(a, b cpuBits) int {
	n := 0
	for w := range b {
		if w < len(a) {
			n += popcount(a[w] & b[w])
		}
	}
	return n
}

func (p *pass) runningLimit(j *Job) time.Duration {
	if j.TimeLimit > 0 {
		return j.TimeLimit
	}
	if pi, ok := p.c.partIdx[j.Partition]; ok {
		part := p.c.snap.Partitions[pi]
		if part.DefaultTime > 0 {
			return part.DefaultTime
		}
		return part.MaxTime
	}
	return 0
}

// holdAdminReservations blocks reserved nodes for everyone else.
func (p *pass) holdAdminReservations() {
	c := p.c
	for ri, r := range c.resv {
		if r.end <= c.now {
			continue
		}
		for _, part := range r.slices {
			p.st.addHold(part.n, hold{s: r.start, e: r.end, cpus: part.cpus, mem: part.mem, mask: part.mask, tag: int32(ri), partial: true})
		}
		r.whole.each(func(n int) bool {
			if cl := c.nodeClass[n]; cl >= 0 {
				k := c.classes[cl]
				p.st.addHold(n, hold{s: r.start, e: r.end, cpus: k.cpus, mem: k.shape.MemoryMB, mask: k.allMask, tag: int32(ri)})
			}
			return true
		})
	}
}

type badRequest struct {
	reason Reason
	detail string
}

// resolveAll turns every pending job into a shape (deduplicated) or a
// reason it cannot run as asked.
func (p *pass) resolveAll() ([]pendingJob, []badRequest) {
	var bad []badRequest
	jobs := p.c.snap.Jobs
	n := 0
	for i := range jobs {
		if jobs[i].State == JobPending {
			n++
		}
	}
	pend := make([]pendingJob, 0, n)
	for ji := range jobs {
		j := &jobs[ji]
		if j.State != JobPending {
			continue
		}
		if len(j.Partitions) > 1 {
			pend = append(pend, p.resolveMulti(j, ji))
			continue
		}
		key, reason, detail := p.resolve(j, ji)
		qi := p.qosIndex(j.QOS)
		if reason != "" {
			pend = append(pend, pendingJob{ji: int32(ji), shape: -1, bad: int32(len(bad)), qos: qi})
			bad = append(bad, badRequest{reason, detail})
			continue
		}
		pend = append(pend, pendingJob{ji: int32(ji), shape: p.shapeOf(key, j), qos: qi})
	}
	p.stats.Pending = len(pend)
	p.stats.Shapes = len(p.shapes)
	p.stats.NodeClasses = len(p.c.classes)
	p.stats.Nodes = p.c.n
	return pend, bad
}

// shapeTally is what one job of the shape asks for, counted once per
// shape: every job of it asks for the same, and an exclusive shape's
// count scans its eligible nodes.
func (p *pass) shapeTally(sh *shape) Tally {
	if !sh.tallied {
		sh.tally, sh.tallied = p.jobTally(sh), true
	}
	return sh.tally
}

func (p *pass) jobTally(sh *shape) Tally {
	t := Tally{Jobs: 1, Nodes: int(sh.nodes), CPUs: int(sh.nodes) * int(sh.need.cpus), GPUs: int(sh.nodes) * int(sh.need.gpus),
		MemMB: int64(sh.nodes) * sh.need.mem, GPUType: sh.need.gpuType,
		NodeCPUs: int(sh.need.cpus), NodeGPUs: int(sh.need.gpus), NodeMemMB: sh.need.mem}
	if sh.need.gpus == 0 {
		t.GPUType = ""
	}
	if sh.exclusive {
		// An exclusive job gets whole nodes: count the biggest it may get.
		cpus, gpus := p.exclusiveMax(sh)
		t.CPUs, t.GPUs = int(sh.nodes)*cpus, int(sh.nodes)*gpus
		t.NodeCPUs, t.NodeGPUs = cpus, gpus
	}
	if sh.limit < forever {
		t.Wall = time.Duration(sh.limit) * time.Second
	}
	return t
}

// exclusiveMax is the most CPUs and usable devices one eligible node of
// the shape has.
func (p *pass) exclusiveMax(sh *shape) (cpus, gpus int) {
	sh.eligible.each(func(n int) bool {
		cl := p.c.classes[p.c.nodeClass[n]]
		cpus = max(cpus, int(cl.cpus))
		gpus = max(gpus, popcount(cl.allMask&^p.c.drained[n]))
		return true
	})
	return cpus, gpus
}

// admit runs the QOS limit and the configured limiters.
func (p *pass) admit(j *Job, qi int32, want Tally) (Reason, string, bool) {
	if qi >= 0 {
		q := p.c.snap.QOS[qi]
		if q.MaxGPUsPerUser <= 0 || want.GPUs == 0 {
			// no GPU limit applies
		} else if held := p.usage.UserQOS(j.User, j.QOS).GPUs; held+want.GPUs > q.MaxGPUsPerUser {
			return ReasonQOSMaxGRESPerUser, fmt.Sprintf("user %s holds %d GPUs under QOS %s (MaxTRESPerUser=gres/gpu=%d); this job needs %d more", j.User, held, j.QOS, q.MaxGPUsPerUser, want.GPUs), false
		}
	} else if j.QOS != "" {
		return ReasonInvalidQOS, fmt.Sprintf("QOS %q is not defined", j.QOS), false
	}
	for _, lim := range p.cfg.Limits {
		if r, fact, ok := lim(j, want, p.usage); !ok {
			return r, fact, false
		}
	}
	return "", "", true
}
