package replay

import "github.com/parityhpc/parity/scheduler/core"

// fragmentation measures free GPUs that no pending job can use: GPUs free
// on a node with fewer free than the smallest per-node demand in the
// queue. It integrates that count, and all free GPUs, over the time the
// queue is not empty.
type fragmentation struct {
	nodeIdx map[string]int
	free    []int
	demand  []int // pending jobs by per-node GPU demand (1..perNode)

	last           int64
	frag, freeNow  int64
	fragSec, freeQ float64 // GPU-seconds fragmented / free while jobs wait
	queuedSec      int64
	queuedNow      bool
}

func newFragmentation(nodes []core.Node, perNode int) *fragmentation {
	f := &fragmentation{nodeIdx: make(map[string]int, len(nodes)), free: make([]int, len(nodes)), demand: make([]int, perNode+1)}
	for i, n := range nodes {
		f.nodeIdx[n.Name] = i
		f.free[i] = perNode
	}
	return f
}

func (f *fragmentation) queued(demand, delta int) {
	if demand >= 0 && demand < len(f.demand) {
		f.demand[demand] += delta
	}
}

// take moves a job's GPUs out of (sign -1) or back into (sign +1) the free count.
func (f *fragmentation) take(alloc []core.NodeAlloc, sign int) {
	for _, a := range alloc {
		if i, ok := f.nodeIdx[a.Node]; ok {
			f.free[i] += sign * len(a.Devices)
		}
	}
}

// observe closes the interval since the last observation and samples the
// state that holds from t on.
func (f *fragmentation) observe(t int64, queue int) {
	if dt := t - f.last; dt > 0 {
		f.fragSec += float64(f.frag * dt)
		f.freeQ += float64(f.freeNow * dt)
		if f.queuedNow {
			f.queuedSec += dt
		}
	}
	f.last = t
	f.frag, f.freeNow, f.queuedNow = 0, 0, queue > 0
	if queue == 0 {
		return
	}
	least := len(f.demand)
	for d := 1; d < len(f.demand); d++ {
		if f.demand[d] > 0 {
			least = d
			break
		}
	}
	for _, n := range f.free {
		f.freeNow += int64(n)
		if n > 0 && n < least {
			f.frag += int64(n)
		}
	}
}
