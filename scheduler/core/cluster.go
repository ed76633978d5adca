package core

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/parityhpc/parity/topology"
)

// class is a node class: every node whose shape has the same key. Device
// choices and ideal layouts are computed once per class, not per node.
type class struct {
	id        int
	shape     *NodeShape
	cpus      int32
	cpuWords  []uint64   // the shape's CPU set as words
	numaWords [][]uint64 // each NUMA node's CPUs as words
	allMask   uint64
	typeNames []string
	typeMasks []uint64
	// groups are the partitions of each whole GPU (DeviceSlot.Group-1);
	// partMask is all of them.
	groups   []uint64
	partMask uint64
	choices  map[choiceKey]devChoice
	nodes    bitset
}

type choiceKey struct {
	avail uint64
	k     int
	one   bool // from one group (Job.OneParent)
}

// devChoice is a cached topology.ChooseDevices answer: the chosen device
// mask, how many islands it spans and the CPUs local to it (as words).
type devChoice struct {
	mask    uint64
	islands int
	local   []uint64
}

// mostInGroup is the most devices of mask one group holds.
func (c *class) mostInGroup(mask uint64) int {
	best := 0
	for _, g := range c.groups {
		best = max(best, popcount(mask&g))
	}
	return best
}

// typeMask returns the devices of the class with type typ ("" = any).
func (c *class) typeMask(typ string) uint64 {
	if typ == "" {
		return c.allMask
	}
	for i, t := range c.typeNames {
		if t == typ {
			return c.typeMasks[i]
		}
	}
	return 0
}

// cluster is the static, per-snapshot view: node indices, classes and the
// bitsets that static filters produce.
type cluster struct {
	snap      *Snapshot
	cfg       Config
	now       int64
	n         int
	nodeIdx   map[string]int32
	nodeClass []int32
	drained   []uint64 // per-GPU drains as device masks
	classes   []*class
	usable    bitset
	downBits  bitset
	drainBits bitset
	partIdx   map[string]int
	partNodes []bitset
	features  map[string]bitset
	leafOf    []int32
	inTree    bitset
	maxDev    int
	totalCPUs int
	totalMem  int64
	totalGPUs map[string]int // by type, "" = all
	resv      []resvInfo
	warnings  []string
}

type resvInfo struct {
	nodes      bitset // every node it touches: where its jobs may run
	whole      bitset // nodes reserved whole
	slices     []resvPart
	start, end int64
}

// unixS converts a time to seconds; the zero time maps to 0.
func unixS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// countGPUs adds a node's usable devices to the totals by type. A node's
// devices are runs of one type, so the map is touched once per run, not
// once per device: on a 1,000-node cluster that was a tenth of a pass.
func (c *cluster) countGPUs(devices []DeviceSlot, drained uint64) {
	typ, run, all := "", 0, 0
	for d, slot := range devices {
		if drained&(1<<uint(d)) != 0 {
			continue
		}
		if slot.Type != typ && run > 0 {
			c.totalGPUs[typ] += run
			run = 0
		}
		typ = slot.Type
		run++
		all++
	}
	if run > 0 {
		c.totalGPUs[typ] += run
	}
	if all > 0 {
		c.totalGPUs[""] += all
	}
}

func newCluster(snap *Snapshot, cfg Config, now time.Time) *cluster {
	c := &cluster{snap: snap, cfg: cfg, now: now.Unix(), n: len(snap.Nodes),
		nodeIdx: make(map[string]int32, len(snap.Nodes)), partIdx: map[string]int{},
		features: map[string]bitset{}, totalGPUs: map[string]int{}}
	c.nodeClass = make([]int32, c.n)
	c.drained = make([]uint64, c.n)
	c.usable, c.downBits, c.drainBits = newBitset(c.n), newBitset(c.n), newBitset(c.n)
	byKey := map[string]*class{}
	byPtr := map[*NodeShape]*class{}
	for i := range snap.Nodes {
		nd := &snap.Nodes[i]
		c.nodeClass[i] = -1
		if _, dup := c.nodeIdx[nd.Name]; dup || nd.Name == "" {
			c.warnf("node #%d %q: empty or duplicate name; ignored", i, nd.Name)
			continue
		}
		c.nodeIdx[nd.Name] = int32(i)
		if nd.Shape == nil || len(nd.DeviceUUIDs) != len(nd.Shape.Devices) {
			c.warnf("node %q: no shape, or %d device UUIDs for a shape of %d devices; ignored", nd.Name, len(nd.DeviceUUIDs), deviceCount(nd.Shape))
			continue
		}
		cl := byPtr[nd.Shape]
		if cl == nil {
			if cl = byKey[nd.Shape.key]; cl == nil {
				cl = newClass(len(c.classes), nd.Shape, c.n)
				c.classes = append(c.classes, cl)
				byKey[nd.Shape.key] = cl
			}
			byPtr[nd.Shape] = cl
		}
		c.nodeClass[i] = int32(cl.id)
		cl.nodes.set(i)
		c.maxDev = max(c.maxDev, len(nd.Shape.Devices))
		for _, u := range nd.DrainedDevices {
			if d := deviceIndex(nd, u); d >= 0 {
				c.drained[i] |= 1 << uint(d)
			}
		}
		switch nd.State {
		case NodeDown:
			c.downBits.set(i)
		case NodeDrain:
			c.drainBits.set(i)
		default:
			c.usable.set(i)
			c.totalCPUs += int(cl.cpus)
			c.totalMem += nd.Shape.MemoryMB
			c.countGPUs(nd.Shape.Devices, c.drained[i])
		}
		for _, f := range nd.Features {
			fb := c.features[f]
			if fb == nil {
				fb = newBitset(c.n)
				c.features[f] = fb
			}
			fb.set(i)
		}
	}
	c.initPartitions()
	c.initSwitches()
	c.initReservations()
	return c
}

func newClass(id int, s *NodeShape, n int) *class {
	cl := &class{id: id, shape: s, cpus: int32(s.CPUs.Count()), choices: map[choiceKey]devChoice{}, nodes: newBitset(n)}
	cl.cpuWords, cl.numaWords = s.cpuWords, s.numaWords
	for i, d := range s.Devices {
		bit := uint64(1) << uint(i)
		cl.allMask |= bit
		if d.Group > 0 {
			for len(cl.groups) < d.Group {
				cl.groups = append(cl.groups, 0)
			}
			cl.groups[d.Group-1] |= bit
			cl.partMask |= bit
		}
		found := false
		for t, name := range cl.typeNames {
			if name == d.Type {
				cl.typeMasks[t] |= bit
				found = true
			}
		}
		if !found {
			cl.typeNames = append(cl.typeNames, d.Type)
			cl.typeMasks = append(cl.typeMasks, bit)
		}
	}
	return cl
}

func deviceCount(s *NodeShape) int {
	if s == nil {
		return 0
	}
	return len(s.Devices)
}

func deviceIndex(nd *Node, uuid string) int {
	for i, u := range nd.DeviceUUIDs {
		if u == uuid {
			return i
		}
	}
	return -1
}

func (c *cluster) warnf(format string, args ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, args...))
}

func (c *cluster) initPartitions() {
	c.partNodes = make([]bitset, len(c.snap.Partitions))
	for pi, p := range c.snap.Partitions {
		if _, dup := c.partIdx[p.Name]; dup {
			c.warnf("partition %q defined twice; the first wins", p.Name)
			continue
		}
		c.partIdx[p.Name] = pi
		b := newBitset(c.n)
		for _, name := range p.Nodes {
			if i, ok := c.nodeIdx[name]; ok && c.nodeClass[i] >= 0 {
				b.set(int(i))
			} else {
				c.warnf("partition %q names unknown node %q", p.Name, name)
			}
		}
		c.partNodes[pi] = b
	}
}

func (c *cluster) initSwitches() {
	c.leafOf = make([]int32, c.n)
	c.inTree = newBitset(c.n)
	for i := range c.leafOf {
		c.leafOf[i] = -1
		if c.snap.Switches == nil {
			continue
		}
		if leaf, ok := c.snap.Switches.LeafOf(c.snap.Nodes[i].Name); ok {
			c.leafOf[i] = int32(leaf)
			c.inTree.set(i)
		}
	}
}

func (c *cluster) initReservations() {
	c.resv = make([]resvInfo, len(c.snap.Reservations))
	for ri, r := range c.snap.Reservations {
		b := newBitset(c.n)
		for _, name := range r.Nodes {
			if i, ok := c.nodeIdx[name]; ok {
				b.set(int(i))
			} else {
				c.warnf("reservation %q names unknown node %q", r.Name, name)
			}
		}
		end := unixS(r.End)
		if r.End.IsZero() {
			end = forever
		}
		info := resvInfo{nodes: b, whole: b.clone(), start: unixS(r.Start), end: end}
		info.slices = c.resvParts(r, info.nodes)
		c.resv[ri] = info
	}
}

// forever is the end of a job without a time limit.
const forever = int64(1) << 62

func cpuSetWords(s topology.CPUSet) []uint64 {
	if s.IsEmpty() {
		return nil
	}
	return s.Words()
}

func popcount(m uint64) int { return bits.OnesCount64(m) }

func trailing(m uint64) int { return bits.TrailingZeros64(m) }
