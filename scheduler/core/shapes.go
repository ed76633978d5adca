package core

import (
	"fmt"
	"strconv"
	"strings"
)

// need is what a job asks of each of its nodes.
type need struct {
	cpus    int32
	mem     int64
	gpus    int32
	gpuType string
}

// shapeKey identifies jobs that are interchangeable for placement: same
// partition, per-node need, node count, time limit and constraints. Jobs
// with node lists or devices to avoid get a unique key (uniq), so they
// never share a shape.
type shapeKey struct {
	part       int32
	need       need
	nodes      int32
	limit      int64
	exclusive  bool
	contiguous bool
	switches   int32
	switchHard bool
	constraint string
	resv       int32
	uniq       int32
	oneParent  bool // Job.OneParent, for two or more devices a node
}

// shape is a deduplicated request with everything static about it
// computed once per pass: which nodes could ever take it and why not.
type shape struct {
	shapeKey
	id       int
	typeMask []uint64 // per class: the devices of the requested type
	// one is set per class where the devices must come from one group:
	// the job asks it (oneParent) and its type is partitions there; nil
	// for shapes that do not ask (most), so they allocate nothing.
	one []bool
	// avoid masks devices per node that this (unique) shape's job must
	// never get; nil for every other shape.
	avoid    []avoidMask
	all      bitset // static filters passed, ignoring node state
	eligible bitset // all ∩ usable nodes
	// static is set when the shape can never run as asked, with a fact.
	static       Reason
	staticDetail string
	// failed memoises "cannot start now": capacity only shrinks during a
	// pass, so a shape that failed once fails for every later job.
	failed     bool
	failDetail string
	// resvBlock is set, with Slurm's words for it, when admin
	// reservations are what keeps the shape from starting now.
	resvBlock string
	est       estimate
	tally     Tally // see shapeTally
	tallied   bool
}

type estimate struct {
	done  bool
	ok    bool
	start int64
	lower int64 // no start is possible before this (monotone within a pass)
	never bool  // no start found within the horizon
}

// expectedStart is the shape's earliest start, computed once a pass; not
// ok for a shape that can never start here or whose estimate found none.
func (p *pass) expectedStart(sh *shape) (int64, bool) {
	if sh.static != "" {
		return 0, false
	}
	if !sh.est.done {
		sh.est.done = true
		sh.est.start, _, sh.est.ok = p.earliest(sh, p.startFrom(sh), sh.resv, false)
	}
	return sh.est.start, sh.est.ok
}

// enough reports whether mask holds the shape's devices on a node of cl:
// as many of the type, and, where they must come from one group, that
// many in one group.
func (sh *shape) enough(cl *class, mask uint64) bool {
	k, m := int(sh.need.gpus), mask&sh.typeMask[cl.id]
	return popcount(m) >= k && (!sh.oneOn(cl) || cl.mostInGroup(m) >= k)
}

// oneOn reports whether the shape's devices on cl come from one group.
func (sh *shape) oneOn(cl *class) bool { return sh.one != nil && sh.one[cl.id] }

// chooseFor picks the shape's devices among avail on a node of cl.
func (p *pass) chooseFor(sh *shape, cl *class, avail uint64) devChoice {
	return p.choose(cl, avail, int(sh.need.gpus), sh.oneOn(cl))
}

// staticKey caches the partition/feature/reservation bitset shared by shapes.
type staticKey struct {
	part       int32
	constraint string
	resv       int32
}

// buildShape computes the static side of a new shape.
func (p *pass) buildShape(k shapeKey, j *Job) *shape {
	c := p.c
	sh := &shape{shapeKey: k, id: len(p.shapes)}
	sh.typeMask = make([]uint64, len(c.classes))
	if k.oneParent {
		sh.one = make([]bool, len(c.classes))
	}
	base, err := p.staticSet(staticKey{part: k.part, constraint: k.constraint, resv: k.resv})
	if err != "" {
		sh.static, sh.staticDetail = ReasonBadConstraints, err
		sh.all, sh.eligible = newBitset(c.n), newBitset(c.n)
		return sh
	}
	capOK := newBitset(c.n)
	for _, cl := range c.classes {
		tm := cl.typeMask(k.need.gpuType)
		sh.typeMask[cl.id] = tm
		if sh.one != nil {
			sh.one[cl.id] = tm != 0 && tm&^cl.partMask == 0
		}
		if cl.cpus >= k.need.cpus && cl.shape.MemoryMB >= k.need.mem && sh.enough(cl, tm) {
			capOK.or(cl.nodes)
		}
	}
	sh.all = base.clone()
	sh.all.and(capOK)
	if k.uniq != 0 {
		sh.all.and(p.nodeListSet(j.NodeList, true))
		sh.all.andNot(p.nodeListSet(j.Exclude, false))
		p.applyAvoid(sh, j)
	}
	sh.eligible = sh.all.clone()
	sh.eligible.and(c.usable)
	total, usable := sh.all.count(), sh.eligible.count()
	switch {
	case total < int(k.nodes):
		sh.static = ReasonBadConstraints
		sh.staticDetail = fmt.Sprintf("needs %d node(s) with %s; the partition has %d such node(s)", k.nodes, describeNeed(k.need, k.exclusive), total)
	case usable < int(k.nodes) && len(j.NodeList) > 0:
		// Slurm's words: squeue shows "ReqNodeNotAvail, UnavailableNodes:n4".
		sh.static, sh.staticDetail = ReasonReqNodeNotAvail, "UnavailableNodes:"+p.unavailable(sh.all)
	case usable < int(k.nodes):
		// Slurm's main scheduler words it so (reason Resources, this
		// state_desc), and squeue and scontrol print the words.
		sh.static, sh.staticDetail = ReasonResources, DescNodesDown
	}
	return sh
}

// unavailable lists the nodes of set that are down, drained or not
// responding, comma-separated.
func (p *pass) unavailable(set bitset) string {
	down := set.clone()
	down.andNot(p.c.usable)
	var out []string
	down.each(func(n int) bool {
		out = append(out, p.c.snap.Nodes[n].Name)
		return true
	})
	return strings.Join(out, ",")
}

// staticSet is partition ∩ constraint ∩ reservation membership.
func (p *pass) staticSet(k staticKey) (bitset, string) {
	if b, ok := p.statics[k]; ok {
		return b, p.staticErr[k]
	}
	c := p.c
	b := c.partNodes[k.part].clone()
	var errText string
	if k.constraint != "" {
		fb, err := p.featureSet(k.constraint)
		if err != nil {
			errText = err.Error()
		} else {
			b.and(fb)
		}
	}
	if k.resv >= 0 {
		b.and(c.resv[k.resv].nodes)
	}
	p.statics[k] = b
	if errText != "" {
		p.staticErr[k] = errText
	}
	return b, errText
}

// featureSet evaluates a --constraint expression over node features:
// names joined by '&' or '|', left to right, as Slurm does without
// parentheses. Counts, brackets and parentheses are not supported.
func (p *pass) featureSet(expr string) (bitset, error) {
	if strings.ContainsAny(expr, "[]()*") {
		return nil, fmt.Errorf("constraint %q: brackets, parentheses and counts are not supported", expr)
	}
	var acc bitset
	op := byte('&')
	start := 0
	for i := 0; i <= len(expr); i++ {
		if i < len(expr) && expr[i] != '&' && expr[i] != '|' && expr[i] != ',' {
			continue
		}
		name := strings.TrimSpace(expr[start:i])
		if name == "" {
			return nil, fmt.Errorf("constraint %q: empty feature name", expr)
		}
		fb := p.c.features[name]
		if fb == nil {
			fb = newBitset(p.c.n)
		}
		switch {
		case acc == nil:
			acc = fb.clone()
		case op == '|':
			acc.or(fb)
		default:
			acc.and(fb)
		}
		if i < len(expr) {
			op = expr[i]
			if op == ',' {
				op = '&'
			}
		}
		start = i + 1
	}
	return acc, nil
}

func (p *pass) nodeListSet(names []string, required bool) bitset {
	b := newBitset(p.c.n)
	for _, name := range names {
		if i, ok := p.c.nodeIdx[name]; ok {
			b.set(int(i))
		}
	}
	if required && len(names) == 0 {
		for i := range b {
			b[i] = ^uint64(0)
		}
	}
	return b
}

// describeNeed renders a per-node need for people: "8 h100, 16 CPUs, 64 GiB".
// It runs once per failing shape, so it builds the text in one allocation.
func describeNeed(n need, exclusive bool) string {
	b := make([]byte, 0, 48)
	if exclusive {
		b = append(b, "the whole node, "...)
	}
	if n.gpus > 0 {
		typ := n.gpuType
		if typ == "" {
			typ = "GPU"
		}
		b = strconv.AppendInt(b, int64(n.gpus), 10)
		b = append(b, ' ')
		b = append(b, typ...)
		b = append(b, ", "...)
	}
	b = strconv.AppendInt(b, int64(n.cpus), 10)
	b = append(b, " CPUs"...)
	if n.mem > 0 {
		b = append(b, ", "...)
		b = appendMB(b, n.mem)
	}
	return string(b)
}

func appendMB(b []byte, mb int64) []byte {
	if mb >= 1024 && mb%1024 == 0 {
		return append(strconv.AppendInt(b, mb/1024, 10), " GiB"...)
	}
	return append(strconv.AppendInt(b, mb, 10), " MiB"...)
}

func formatMB(mb int64) string { return string(appendMB(nil, mb)) }
