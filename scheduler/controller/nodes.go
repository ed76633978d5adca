package controller

import (
	"slices"
	"sync"
	"time"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
)

// deriveShape derives the shape the scheduler places on from the
// inventory the node's agent registered (the state machine's record). An
// inventory the core cannot use leaves the node without a shape (it takes
// no jobs) rather than failing.
func (n *node) deriveShape() error {
	if n.Inventory == nil {
		n.hasShape = false
		return nil
	}
	cn, err := core.NodeFromInventory(n.name, *n.Inventory, n.spec.Features...)
	if err != nil {
		n.hasShape = false
		return err
	}
	n.core.Shape, n.core.DeviceUUIDs = cn.Shape, cn.DeviceUUIDs
	n.hasShape = true
	return nil
}

// responding reports whether the agent was heard from recently enough.
func (n *node) responding(now time.Time, interval time.Duration) bool {
	return n.registered && now.Sub(n.lastHeartbeat) <= 2*interval+time.Second
}

// coreState is the node's state as the scheduler sees it.
func (n *node) coreState(now time.Time, interval time.Duration) core.NodeState {
	switch {
	case n.Down || !n.registered:
		return core.NodeDown
	case n.Drain:
		return core.NodeDrain
	case !n.responding(now, interval):
		return core.NodeDown
	}
	return core.NodeIdle
}

// usage sums the CPUs, memory and devices the node's jobs hold.
func (c *Controller) nodeUsage(n *node) (cpus int, mem int64, held map[string]core.JobID) {
	held = map[string]core.JobID{}
	for id := range n.jobs {
		j := c.st.jobs[id]
		if j == nil {
			continue
		}
		for _, a := range j.Core.Alloc {
			if a.Node != n.name {
				continue
			}
			cpus += a.CPUs.Count()
			mem += a.MemoryMB
			for _, d := range a.Devices {
				held[d] = id
			}
		}
	}
	return cpus, mem, held
}

// nodeProto renders a node for the API (c.mu held).
func (c *Controller) nodeProto(n *node) *pb.Node {
	return c.nodeProtoIn(n, c.pcfg().PartitionsOf(n.name))
}

// partitionsByNode is each node's partitions, in one pass over the
// partitions: a listing of every node asks PartitionsOf, a walk of every
// partition's nodes, once per node, which is quadratic in the cluster
// (10k nodes: 100M comparisons a listing).
func (c *Controller) partitionsByNode() map[string][]string {
	out := map[string][]string{}
	for _, p := range c.pcfg().Partitions {
		for _, n := range p.NodeNames {
			if ps := out[n]; len(ps) == 0 || ps[len(ps)-1] != p.Name {
				out[n] = append(ps, p.Name)
			}
		}
	}
	return out
}

// nodeProtoIn renders a node in the partitions given (c.mu held).
func (c *Controller) nodeProtoIn(n *node, partitions []string) *pb.Node {
	now := c.now()
	p := &pb.Node{Name: n.name, Reason: n.Reason, ReasonUser: n.ReasonUser, ReasonTime: api.Timestamp(n.ReasonTime),
		Features: n.spec.Features, Partitions: partitions, Registered: n.registered,
		LastHeartbeat: api.Timestamp(n.lastHeartbeat)}
	cpus, mem, held := c.nodeUsage(n)
	if n.hasShape {
		p.Cpus = int32(n.core.Shape.CPUs.Count())
		p.MemoryMb = n.core.Shape.MemoryMB
	} else {
		p.Cpus, p.MemoryMb = int32(n.spec.CPUs), n.spec.MemoryMB
	}
	p.AllocCpus, p.AllocMemoryMb = int32(cpus), mem
	for id := range n.jobs {
		p.Jobs = append(p.Jobs, uint64(id))
	}
	slices.Sort(p.Jobs)
	if n.Inventory != nil && n.Inventory.Host != nil && n.Inventory.Host.Sockets > 0 && n.Inventory.Host.Cores > 0 {
		h := n.Inventory.Host
		p.Sockets, p.CoresPerSocket = int32(h.Sockets), int32(max(h.Cores/h.Sockets, 1))
		p.ThreadsPerCore = int32(max(h.CPUs.Count()/h.Cores, 1))
	}
	if n.Inventory != nil {
		for _, d := range n.Inventory.Devices {
			g := &pb.GPU{Uuid: d.UUID, Type: d.Type, Index: int32(d.Index), State: "idle", Parent: d.Parent}
			if r, ok := n.GPUDrain[d.UUID]; ok {
				g.State, g.DrainReason = "drain", r
			} else if r, ok := n.GPUDrain[d.Parent]; ok && d.Parent != "" {
				// A slice of a drained GPU is out of service with it.
				g.State, g.DrainReason = "drain", r
			}
			if id, ok := held[d.UUID]; ok {
				g.State, g.JobId = "alloc", uint64(id)
			}
			c.gpuHealth(n, g, now)
			p.Gpus = append(p.Gpus, g)
		}
	}
	base := "IDLE"
	switch {
	case n.Down:
		base = "DOWN"
	case !n.registered:
		base = "UNKNOWN"
	case len(n.jobs) > 0 && n.hasShape && cpus >= n.core.Shape.CPUs.Count():
		base = "ALLOCATED"
	case len(n.jobs) > 0:
		base = "MIXED"
	}
	p.State = base
	if n.Drain {
		p.Flags = append(p.Flags, "DRAIN")
	}
	notResp := n.registered && !n.responding(now, c.cfg.HeartbeatInterval)
	if notResp {
		p.Flags = append(p.Flags, "NOT_RESPONDING")
	}
	// Slurm's backfill flags only the idle nodes of a job's plan: a node
	// running jobs stays mixed or allocated.
	planned := base == "IDLE" && c.st.planned[n.name]
	if planned {
		p.Flags = append(p.Flags, "PLANNED")
	}
	p.DisplayState = displayState(base, n.Drain, notResp || !n.registered, planned)
	return p
}

// displayState derives sinfo's one-word state: a planned node (idle, held
// for a pending job's later start) is plnd, as Slurm 22.05's sinfo shows a
// node its backfill planned.
func displayState(base string, drain, notResponding, planned bool) string {
	s := map[string]string{"IDLE": "idle", "MIXED": "mix", "ALLOCATED": "alloc", "DOWN": "down", "UNKNOWN": "unk"}[base]
	if planned {
		s = "plnd"
	}
	if drain {
		s = "drain"
		if base == "MIXED" || base == "ALLOCATED" {
			s = "drng"
		}
	}
	if notResponding {
		s += "*"
	}
	return s
}

// orderQueue holds a node's undelivered orders; the node's Orders stream
// drains it. Orders stay queued while no stream is open.
type orderQueue struct {
	mu     sync.Mutex
	orders []*pb.Order
	wake   chan struct{}
	closed bool
}

func newOrderQueue() *orderQueue { return &orderQueue{wake: make(chan struct{}, 1)} }

func (q *orderQueue) push(o ...*pb.Order) {
	q.mu.Lock()
	q.orders = append(q.orders, o...)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take removes and returns every queued order.
func (q *orderQueue) take() ([]*pb.Order, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.orders
	q.orders = nil
	return out, q.closed
}

// requeue puts orders back at the front (a stream failed mid-send).
func (q *orderQueue) requeue(os []*pb.Order) {
	q.mu.Lock()
	q.orders = append(os, q.orders...)
	q.mu.Unlock()
}

// drop removes queued orders for a job (it was cancelled before launch).
func (q *orderQueue) drop(id uint64, kind string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.orders = slices.DeleteFunc(q.orders, func(o *pb.Order) bool { return o.GetJobId() == id && o.GetKind() == kind })
}

func (q *orderQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
