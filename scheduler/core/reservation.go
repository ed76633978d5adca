package core

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"time"
)

// ErrReservation is wrapped by reservation errors; the message names the
// reservation and what is wrong.
var ErrReservation = errors.New("core: invalid reservation")

// ResvFlags are reservation flags (scontrol create reservation Flags=).
type ResvFlags uint8

// Reservation flags Parity implements.
const (
	// ResvMaint is MAINT: a maintenance window. It may overlap other
	// reservations; jobs outside it start on its nodes only if they end
	// before it starts (as for every reservation).
	ResvMaint ResvFlags = 1 << iota
	// ResvIgnoreJobs is IGNORE_JOBS: the reservation may be created while
	// running jobs would still hold its resources at its start; its jobs
	// wait for them.
	ResvIgnoreJobs
)

var resvFlagNames = [...]struct {
	f    ResvFlags
	name string
}{{ResvMaint, "MAINT"}, {ResvIgnoreJobs, "IGNORE_JOBS"}}

// String renders the flags as scontrol shows them ("MAINT,IGNORE_JOBS").
func (f ResvFlags) String() string {
	var out []string
	for _, n := range resvFlagNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return strings.Join(out, ",")
}

// ParseResvFlags reads a Flags= value: comma-separated, case-insensitive.
func ParseResvFlags(s string) (ResvFlags, error) {
	var f ResvFlags
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		found := false
		for _, n := range resvFlagNames {
			if strings.EqualFold(w, n.name) {
				f |= n.f
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("%w: Flags=%q: flag %q is not supported (MAINT, IGNORE_JOBS)", ErrReservation, s, w)
		}
	}
	return f, nil
}

// ResvSlice is the part of one node a TRES reservation holds.
type ResvSlice struct {
	Node     string
	Devices  []string // UUIDs
	CPUs     int
	MemoryMB int64
}

// resvPart is a slice resolved against the cluster.
type resvPart struct {
	n    int
	cpus int32
	mem  int64
	mask uint64
}

// resvParts resolves a reservation's slices and marks their nodes as the
// reservation's.
func (c *cluster) resvParts(r Reservation, nodes bitset) []resvPart {
	var out []resvPart
	for _, sl := range r.Slices {
		i, ok := c.nodeIdx[sl.Node]
		if !ok || c.nodeClass[i] < 0 {
			c.warnf("reservation %q names unknown node %q", r.Name, sl.Node)
			continue
		}
		nd := &c.snap.Nodes[i]
		part := resvPart{n: int(i), cpus: int32(sl.CPUs), mem: sl.MemoryMB}
		for _, u := range sl.Devices {
			if d := deviceIndex(nd, u); d >= 0 {
				part.mask |= 1 << uint(d)
			} else {
				c.warnf("reservation %q names unknown device %q on %s", r.Name, u, sl.Node)
			}
		}
		nodes.set(int(i))
		out = append(out, part)
	}
	return out
}

// runningEnd is when a running job frees what it holds, in seconds
// (forever for a job without a time limit).
func runningEnd(snap *Snapshot, j *Job) int64 {
	limit := j.TimeLimit
	if limit <= 0 {
		for _, part := range snap.Partitions {
			if part.Name == j.Partition {
				limit = part.DefaultTime
				if limit <= 0 {
					limit = part.MaxTime
				}
			}
		}
	}
	end := forever
	if limit > 0 {
		end = unixS(j.Start) + int64(limit/time.Second)
	}
	if pe := unixS(j.PreemptEnd); pe > 0 {
		end = min(end, pe)
	}
	return end
}

func resvEnd(r Reservation) int64 {
	if r.End.IsZero() {
		return forever
	}
	return unixS(r.End)
}

// CheckReservation validates a reservation against the cluster before the
// controller creates (or updates) it: a name and a window; known nodes
// and devices; no overlap with another reservation on the same resources
// unless one of them is MAINT; and, unless IGNORE_JOBS, no running job
// that would still hold its resources when it starts.
func CheckReservation(snap Snapshot, r Reservation) error {
	if r.Name == "" {
		return fmt.Errorf("%w: ReservationName is empty", ErrReservation)
	}
	if !r.End.IsZero() && !r.End.After(r.Start) {
		return fmt.Errorf("%w %s: EndTime %s is not after StartTime %s", ErrReservation, r.Name, r.End.UTC().Format(time.RFC3339), r.Start.UTC().Format(time.RFC3339))
	}
	if len(r.Nodes) == 0 && len(r.Slices) == 0 {
		return fmt.Errorf("%w %s: it reserves no nodes and no TRES", ErrReservation, r.Name)
	}
	own, err := resvFootprint(&snap, r)
	if err != nil {
		return err
	}
	for _, o := range snap.Reservations {
		if o.Name == r.Name || r.Flags&ResvMaint != 0 || o.Flags&ResvMaint != 0 {
			continue
		}
		if unixS(o.Start) >= resvEnd(r) || resvEnd(o) <= unixS(r.Start) {
			continue
		}
		other, err := resvFootprint(&snap, o)
		if err != nil {
			continue // a broken existing reservation is the pass's warning, not this one's error
		}
		if node, ok := own.overlaps(other); ok {
			return fmt.Errorf("%w %s: it overlaps reservation %s on %s during [%s, %s)", ErrReservation, r.Name, o.Name, node,
				r.Start.UTC().Format(time.RFC3339), timeOrForever(resvEnd(r)))
		}
	}
	if r.Flags&ResvIgnoreJobs != 0 {
		return nil
	}
	return checkRunning(&snap, r, own)
}

// checkRunning refuses a reservation whose resources running jobs would
// still hold at its start: any job on a whole node, a job on a reserved
// device, or more CPUs or memory than the node has left beside the slice.
func checkRunning(snap *Snapshot, r Reservation, own footprint) error {
	start := unixS(r.Start)
	cpus := map[string]int{}
	mem := map[string]int64{}
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		if j.State != JobRunning || runningEnd(snap, j) <= start {
			continue
		}
		for _, a := range j.Alloc {
			if own.touches(snap, a) {
				return fmt.Errorf("%w %s: running job %d on %s would still run at its start %s (end it first, or use Flags=IGNORE_JOBS)",
					ErrReservation, r.Name, j.ID, a.Node, r.Start.UTC().Format(time.RFC3339))
			}
			cpus[a.Node] += a.CPUs.Count()
			mem[a.Node] += a.MemoryMB
		}
	}
	for _, sl := range r.Slices {
		for i := range snap.Nodes {
			nd := &snap.Nodes[i]
			if nd.Name != sl.Node || nd.Shape == nil {
				continue
			}
			if cpus[sl.Node]+sl.CPUs > nd.Shape.CPUs.Count() || mem[sl.Node]+sl.MemoryMB > nd.Shape.MemoryMB {
				return fmt.Errorf("%w %s: running jobs on %s would still hold %d CPUs and %d MiB at its start, leaving less than the %d CPUs and %d MiB it reserves (or use Flags=IGNORE_JOBS)",
					ErrReservation, r.Name, sl.Node, cpus[sl.Node], mem[sl.Node], sl.CPUs, sl.MemoryMB)
			}
		}
	}
	return nil
}

func timeOrForever(t int64) string {
	if t >= forever {
		return "forever"
	}
	return time.Unix(t, 0).UTC().Format(time.RFC3339)
}

// footprint is what a reservation holds: whole nodes and device sets or
// CPU amounts on parts of nodes.
type footprint struct {
	whole map[string]bool
	parts map[string]resvPart
}

func resvFootprint(snap *Snapshot, r Reservation) (footprint, error) {
	f := footprint{whole: map[string]bool{}, parts: map[string]resvPart{}}
	byName := map[string]*Node{}
	for i := range snap.Nodes {
		byName[snap.Nodes[i].Name] = &snap.Nodes[i]
	}
	for _, n := range r.Nodes {
		if byName[n] == nil {
			return f, fmt.Errorf("%w %s: unknown node %q", ErrReservation, r.Name, n)
		}
		f.whole[n] = true
	}
	for _, sl := range r.Slices {
		nd := byName[sl.Node]
		switch {
		case nd == nil || nd.Shape == nil:
			return f, fmt.Errorf("%w %s: unknown node %q", ErrReservation, r.Name, sl.Node)
		case f.whole[sl.Node]:
			return f, fmt.Errorf("%w %s: node %s is reserved whole and in part", ErrReservation, r.Name, sl.Node)
		case sl.CPUs < 0 || sl.CPUs > nd.Shape.CPUs.Count():
			return f, fmt.Errorf("%w %s: %d CPUs on %s, which has %d", ErrReservation, r.Name, sl.CPUs, sl.Node, nd.Shape.CPUs.Count())
		case sl.MemoryMB < 0 || sl.MemoryMB > nd.Shape.MemoryMB:
			return f, fmt.Errorf("%w %s: %d MiB of memory on %s, which has %d", ErrReservation, r.Name, sl.MemoryMB, sl.Node, nd.Shape.MemoryMB)
		}
		if _, dup := f.parts[sl.Node]; dup {
			return f, fmt.Errorf("%w %s: node %s appears in two slices", ErrReservation, r.Name, sl.Node)
		}
		part := resvPart{cpus: int32(sl.CPUs), mem: sl.MemoryMB}
		for _, u := range sl.Devices {
			d := deviceIndex(nd, u)
			if d < 0 {
				return f, fmt.Errorf("%w %s: node %s has no device %q", ErrReservation, r.Name, sl.Node, u)
			}
			part.mask |= 1 << uint(d)
		}
		f.parts[sl.Node] = part
	}
	return f, nil
}

// overlaps names a node both footprints hold a share of that cannot be
// shared: whole against anything, or the same devices.
func (f footprint) overlaps(o footprint) (string, bool) {
	for n := range f.whole {
		if _, ok := o.parts[n]; o.whole[n] || ok {
			return n, true
		}
	}
	for n, p := range f.parts {
		if q, ok := o.parts[n]; o.whole[n] || ok && p.mask&q.mask != 0 {
			return n, true
		}
	}
	return "", false
}

// touches reports whether an allocation uses what the footprint holds.
func (f footprint) touches(snap *Snapshot, a NodeAlloc) bool {
	if f.whole[a.Node] {
		return true
	}
	p, ok := f.parts[a.Node]
	if !ok {
		return false
	}
	if p.mask == 0 {
		return false // CPU and memory slices are checked by amount
	}
	for i := range snap.Nodes {
		if snap.Nodes[i].Name != a.Node {
			continue
		}
		for _, u := range a.Devices {
			if d := deviceIndex(&snap.Nodes[i], u); d >= 0 && p.mask&(1<<uint(d)) != 0 {
				return true
			}
		}
	}
	return false
}

// reservationBlock says, in Slurm's words, whether admin reservations are
// what keeps a shape that does not fit now from starting: enough eligible
// nodes would fit were nothing reserved, and an admin reservation (not
// the job's own) holds one of them before the job would end. "" when not.
//
// It runs for every shape that fails to start, so it looks first at the
// few nodes that carry admin holds: when none of them is eligible (the
// usual case) the answer is "" without testing any node, and otherwise
// it counts fitting nodes only until the shape has enough.
func (p *pass) reservationBlock(sh *shape, end int64) string {
	c := p.c
	maint, other := false, false
	for wi, w := range p.st.admin {
		w &= sh.eligible[wi]
		for ; w != 0; w &= w - 1 {
			n := wi<<6 | bits.TrailingZeros64(w)
			m, o := p.adminHolds(sh, n, end)
			if (m || o) && p.baseReason(sh, n, c.now) == FilterOK {
				maint, other = maint || m, other || o
			}
		}
	}
	if !maint && !other || !p.enoughFitUnreserved(sh) {
		return ""
	}
	if maint {
		return "Reserved for maintenance"
	}
	return "May be reserved for other job"
}

// adminHolds reports whether node n carries, before end, a maintenance
// reservation or another admin reservation that is not the shape's own.
func (p *pass) adminHolds(sh *shape, n int, end int64) (maint, other bool) {
	c := p.c
	for _, h := range p.st.holds[n] {
		if h.tag < 0 || h.tag == sh.resv || h.s >= end || h.e <= c.now {
			continue
		}
		if c.snap.Reservations[h.tag].Flags&ResvMaint != 0 {
			maint = true
		} else {
			other = true
		}
	}
	return maint, other
}

// enoughFitUnreserved reports whether at least sh.nodes eligible nodes
// would fit the shape were nothing reserved on them.
func (p *pass) enoughFitUnreserved(sh *shape) bool {
	fit := 0
	sh.eligible.each(func(n int) bool {
		if p.baseReason(sh, n, p.c.now) == FilterOK {
			fit++
		}
		return fit < int(sh.nodes)
	})
	return fit >= int(sh.nodes)
}
