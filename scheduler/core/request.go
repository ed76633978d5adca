package core

import (
	"fmt"
	"math"
	"time"

	"github.com/parityhpc/parity/gres"
)

// resolve turns a job's request into its per-node shape key, or a reason
// it can never run as asked. It allocates nothing on the common path: it
// runs once per pending job per pass.
func (p *pass) resolve(j *Job, ji int) (shapeKey, Reason, string) {
	return p.resolveIn(j, ji, j.Partition)
}

// resolveIn is resolve for the job in the named partition (one of the
// several a job may list).
func (p *pass) resolveIn(j *Job, ji int, partition string) (shapeKey, Reason, string) {
	c := p.c
	pi, ok := p.partIndex(partition)
	if !ok {
		return shapeKey{}, ReasonPartitionConfig, fmt.Sprintf("unknown partition %q", partition)
	}
	part := &c.snap.Partitions[pi]
	nodes := max(j.Nodes, 1)
	if j.Nodes == 0 && j.TasksPerNode > 0 && j.Tasks > j.TasksPerNode {
		// -n 4 --ntasks-per-node=2 needs two nodes (Slurm 22.05's
		// NumNodes=2 on the anchor, where it ran on n[1-2]).
		nodes = (j.Tasks-1)/j.TasksPerNode + 1
	}
	tpn := 1
	switch {
	case j.TasksPerNode > 0:
		tpn = j.TasksPerNode
		if j.Tasks > 0 {
			// Fewer tasks than --ntasks-per-node allows take only their
			// CPUs (-n 1 --ntasks-per-node=2 -N 1: one CPU on the anchor).
			tpn = min(tpn, (j.Tasks-1)/nodes+1)
		}
	case j.Tasks > 0:
		tpn = (j.Tasks-1)/nodes + 1 // ceil without Tasks+nodes overflowing
	}
	gpus, typ, bad := perNodeGPUs(j.GRES, tpn)
	if bad != "" {
		return shapeKey{}, ReasonBadConstraints, bad
	}
	if total, jtyp, bad := perJobGPUs(j.GRES); bad != "" {
		return shapeKey{}, ReasonBadConstraints, bad
	} else if total > 0 {
		if typ != "" && jtyp != "" && typ != jtyp {
			return shapeKey{}, ReasonBadConstraints, fmt.Sprintf("GPU types %q and %q in one job are not supported", typ, jtyp)
		}
		if jtyp != "" {
			typ = jtyp
		}
		if j.Nodes == 0 {
			if per := p.maxDevicesOfType(pi, typ); per > 0 {
				nodes = max(nodes, int((total+int64(per)-1)/int64(per)))
			}
			if spread := p.spreadForCPUs(pi, typ, total, j.CPUsPerGPU); spread > nodes {
				nodes = spread
				if j.Tasks > 0 && j.TasksPerNode == 0 {
					tpn = (j.Tasks-1)/nodes + 1
				}
			}
		}
		gpus = max(gpus, int((total+int64(nodes)-1)/int64(nodes)))
	}
	cpus, mem, bad := perNodeCPUsMem(j, part, tpn, gpus)
	if bad != "" {
		return shapeKey{}, ReasonBadConstraints, bad
	}
	if nodes > math.MaxInt32 {
		return shapeKey{}, ReasonBadConstraints, fmt.Sprintf("%d nodes is more than any cluster holds", nodes)
	}
	limit := j.TimeLimit
	if limit <= 0 {
		limit = part.DefaultTime
	}
	if limit <= 0 {
		limit = part.MaxTime
	}
	if part.MaxTime > 0 && limit > part.MaxTime {
		return shapeKey{}, ReasonPartitionTimeLimit, fmt.Sprintf("time limit %s exceeds partition %s MaxTime %s", fmtDur(limit), part.Name, fmtDur(part.MaxTime))
	}
	if part.MaxNodes > 0 && nodes > part.MaxNodes || part.MinNodes > 0 && nodes < part.MinNodes {
		return shapeKey{}, ReasonPartitionNodeLimit, fmt.Sprintf("%d node(s) is outside partition %s limits [%d, %d]", nodes, part.Name, part.MinNodes, part.MaxNodes)
	}
	k := shapeKey{part: int32(pi), need: need{cpus: int32(cpus), mem: mem, gpus: int32(gpus), gpuType: typ},
		nodes: int32(nodes), limit: forever, exclusive: j.Exclusive || part.Exclusive, contiguous: j.Contiguous,
		constraint: j.Constraint, resv: -1, oneParent: j.OneParent && gpus > 1}
	if limit > 0 {
		k.limit = int64(limit / time.Second)
	}
	if j.Switches > 0 {
		k.switches = int32(min(j.Switches, math.MaxInt32))
		wait := min(j.SwitchWait, p.cfg.MaxSwitchWait)
		k.switchHard = p.c.now < p.eligibleAt(j)+int64(wait/time.Second)
	}
	if j.Reservation != "" {
		ri := p.reservationIndex(j)
		if ri < 0 {
			return shapeKey{}, ReasonReservation, fmt.Sprintf("reservation %q does not exist or does not admit the job", j.Reservation)
		}
		k.resv = int32(ri)
	}
	if len(j.NodeList) > 0 || len(j.Exclude) > 0 || len(j.Avoid) > 0 {
		k.uniq = int32(ji + 1)
	}
	return k, "", ""
}

// perNodeCPUsMem is the job's CPUs (its tasks', its GPUs', at least
// --mincpus) and memory (MiB) per node, every
// product checked: a request whose product overflows (2^62 MiB per CPU ×
// 4 CPUs) can never run, rather than wrapping to no memory at all.
func perNodeCPUsMem(j *Job, part *Partition, tpn, gpus int) (int, int64, string) {
	byTask, ok1 := mulChecked(int64(tpn), int64(max(j.CPUsPerTask, 1)))
	byGPU, ok2 := mulChecked(int64(max(j.CPUsPerGPU, 0)), int64(gpus))
	if !ok1 || !ok2 || byTask > math.MaxInt32 || byGPU > math.MaxInt32 {
		return 0, 0, fmt.Sprintf("CPUs per node (%d task(s) × %d CPUs, or %d GPUs × %d CPUs) is more than any node holds",
			tpn, j.CPUsPerTask, gpus, j.CPUsPerGPU)
	}
	cpus := int(max(byTask, byGPU, int64(j.MinCPUs), 1))
	per, of, what := max(part.DefMemPerCPU, 0), int64(cpus), "CPUs"
	switch {
	case j.MemPerNodeMB > 0:
		return cpus, j.MemPerNodeMB, ""
	case j.MemPerCPUMB > 0:
		per = j.MemPerCPUMB
	case j.MemPerGPUMB > 0:
		per, of, what = j.MemPerGPUMB, int64(gpus), "GPUs"
	}
	mem, ok := mulChecked(per, of)
	if !ok {
		return 0, 0, fmt.Sprintf("memory per node (%d MiB × %d %s) is more than any node holds", per, of, what)
	}
	return cpus, mem, ""
}

// mulChecked is a×b for non-negative a and b, and false when the product
// overflows int64.
func mulChecked(a, b int64) (int64, bool) {
	if a < 0 || b < 0 || a != 0 && b > math.MaxInt64/a {
		return 0, false
	}
	return a * b, true
}

// perNodeGPUs is the GPUs one node needs: the per-node terms summed, the
// per-task ones (times the node's tasks) summed, and the larger of the
// two, since each is a minimum of the same GPUs (Slurm 22.05 gave
// --gpus-per-node=2 --gpus-per-task=1 -n 4 two GPUs on each of two nodes).
func perNodeGPUs(jr gres.JobRequest, tasksPerNode int) (int, string, string) {
	node, bad := sumGPUs(jr.PerNode, 1, "", false)
	if bad != "" {
		return 0, "", bad
	}
	typ := ""
	if len(jr.PerNode) > 0 {
		typ = jr.PerNode[0].Type
	}
	task, bad := sumGPUs(jr.PerTask, int64(max(tasksPerNode, 1)), typ, len(jr.PerNode) > 0)
	if bad != "" {
		return 0, "", bad
	}
	if len(jr.PerTask) > 0 && len(jr.PerNode) == 0 {
		typ = jr.PerTask[0].Type
	}
	return int(max(node, task)), typ, ""
}

// sumGPUs sums GPU terms, each times mult, all of one type (typ, once
// typed is set).
func sumGPUs(terms gres.Requests, mult int64, typ string, typed bool) (int64, string) {
	var n int64
	add := func(r gres.Request, mult int64) string {
		if r.Name != "gpu" {
			return fmt.Sprintf("gres/%s is not a resource the scheduler places (only gpu)", r.Name)
		}
		if typed && r.Type != typ {
			return fmt.Sprintf("GPU types %q and %q in one job are not supported", typ, r.Type)
		}
		typ, typed = r.Type, true
		c, ok := mulChecked(r.Count, mult)
		if !ok || c > maxDevices-n { // n <= maxDevices here: no sum can wrap
			return fmt.Sprintf("gpu:%d × %d task(s) per node is more than any node holds", r.Count, mult)
		}
		n += c
		return ""
	}
	for _, r := range terms {
		if bad := add(r, mult); bad != "" {
			return 0, bad
		}
	}
	return n, ""
}

// maxJobGPUs bounds a job's --gpus: more than any cluster holds.
const maxJobGPUs = 1 << 20

func perJobGPUs(jr gres.JobRequest) (int64, string, string) {
	var n int64
	typ := ""
	for i, r := range jr.PerJob {
		if r.Name != "gpu" {
			return 0, "", fmt.Sprintf("gres/%s is not a resource the scheduler places (only gpu)", r.Name)
		}
		if i > 0 && r.Type != typ {
			return 0, "", fmt.Sprintf("GPU types %q and %q in one job are not supported", typ, r.Type)
		}
		typ = r.Type
		if r.Count < 0 || r.Count > maxJobGPUs-n { // n <= maxJobGPUs here: no sum can wrap
			return 0, "", fmt.Sprintf("--gpus=%d is more than any cluster holds", r.Count)
		}
		n += r.Count
	}
	return n, typ, ""
}

// maxDevicesOfType is the most devices of typ one node of the partition has.
func (p *pass) maxDevicesOfType(pi int, typ string) int {
	best := 0
	for _, cl := range p.c.classes {
		if n := popcount(cl.typeMask(typ)); n > best && intersects(cl.nodes, p.c.partNodes[pi]) {
			best = n
		}
	}
	return best
}

// spreadForCPUs is how many nodes a job's --gpus needs for its
// --cpus-per-gpu when no node of the partition has the CPUs for all of
// them, as cons_tres spreads them (the anchor, 16-CPU nodes:
// --gpus=h100:2 --cpus-per-gpu=16 ran on n[1-2], --gpus=4 --cpus-per-gpu=6
// on n[1-2] with 24 CPUs). 0 when the CPUs need no spreading, or when no
// node has even one GPU's CPUs (the fit then refuses the job).
func (p *pass) spreadForCPUs(pi int, typ string, gpus int64, cpusPerGPU int) int {
	if cpusPerGPU <= 0 {
		return 0
	}
	most := 0
	for _, cl := range p.c.classes {
		if popcount(cl.typeMask(typ)) > 0 && intersects(cl.nodes, p.c.partNodes[pi]) {
			most = max(most, int(cl.cpus))
		}
	}
	perNode := int64(most / cpusPerGPU) // GPUs whose CPUs one node holds
	if perNode == 0 || gpus <= perNode {
		return 0
	}
	return int(min((gpus+perNode-1)/perNode, math.MaxInt32))
}

func intersects(a, b bitset) bool {
	for i := range a {
		if a[i]&b[i] != 0 {
			return true
		}
	}
	return false
}

func (p *pass) reservationIndex(j *Job) int {
	for i, r := range p.c.snap.Reservations {
		if r.permits(j) {
			return i
		}
	}
	return -1
}

// eligibleAt is when the job became eligible: submit, begin and
// dependency satisfaction, whichever is latest (seconds).
func (p *pass) eligibleAt(j *Job) int64 {
	return max(unixS(j.Submit), unixS(j.Begin), unixS(j.Eligible))
}

// fmtDur renders a duration as Slurm does: [D-]HH:MM:SS.
func fmtDur(d time.Duration) string {
	s := int64(d / time.Second)
	days, s := s/86400, s%86400
	h, m, sec := s/3600, s%3600/60, s%60
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
}
