package controller

import (
	"fmt"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/core"
)

// gresGPU is the GRES name every accelerator is requested and accounted
// under; its type (h100, mi300x…) comes from the inventory as data.
const gresGPU = "gpu"

// billingPolicy reads every partition's TRESBillingWeights; an invalid
// one fails with the partition's name, so a typo never bills silently wrong.
func billingPolicy(cfg *config.Cluster) (accounting.BillingPolicy, error) {
	p := accounting.BillingPolicy{Partitions: map[string]accounting.BillingWeights{}, Mode: cfg.Priority.Billing}
	for _, part := range cfg.Partitions {
		w, err := accounting.ParseBillingWeights(part.BillingWeights)
		if err != nil {
			return p, fmt.Errorf("partition %q billingWeights: %w", part.Name, err)
		}
		p.Partitions[part.Name] = w
	}
	return p, nil
}

// reqTRES is what the job asked for, as Slurm's ReqTRES: CPUs, memory,
// nodes and GPUs (typed entries alongside the total when a type was named).
func reqTRES(j *job) accounting.TRES {
	cj := &j.Core
	nodes := max(cj.Nodes, 1)
	tasks := max(cj.Tasks, cj.TasksPerNode*nodes, 1)
	t := accounting.TRES{accounting.TRESNode: float64(nodes)}
	typed := map[string]float64{}
	var gpus float64
	add := func(typ string, n int64) {
		gpus += float64(n)
		if typ != "" {
			typed[typ] += float64(n)
		}
	}
	for _, r := range cj.GRES.PerJob {
		if r.Name == gresGPU {
			add(r.Type, r.Count)
		}
	}
	for _, r := range cj.GRES.PerNode {
		if r.Name == gresGPU {
			add(r.Type, r.Count*int64(nodes))
		}
	}
	for _, r := range cj.GRES.PerTask {
		if r.Name == gresGPU {
			add(r.Type, r.Count*int64(tasks))
		}
	}
	cpus := tasks * max(cj.CPUsPerTask, 1)
	if cj.CPUsPerGPU > 0 && gpus > 0 {
		cpus = max(cpus, cj.CPUsPerGPU*int(gpus))
	}
	t[accounting.TRESCPU] = float64(cpus)
	switch {
	case cj.MemPerNodeMB > 0:
		t[accounting.TRESMem] = float64(cj.MemPerNodeMB * int64(nodes))
	case cj.MemPerCPUMB > 0:
		t[accounting.TRESMem] = float64(cj.MemPerCPUMB * int64(cpus))
	case cj.MemPerGPUMB > 0 && gpus > 0:
		t[accounting.TRESMem] = float64(cj.MemPerGPUMB) * gpus
	}
	if gpus > 0 {
		t[accounting.TRESGPU] = gpus
		for typ, n := range typed {
			t[accounting.TRESGPU+":"+typ] = n
		}
	}
	return t
}

// allocTRESLocked is what the job holds, as Slurm's AllocTRES: CPUs,
// memory, nodes, GPUs in total and per type (gres/gpu:h100), and the
// billing the partition's weights give it. Nil before an allocation.
// A GPU partition counts one in its type (gres/gpu:1g.10gb=1) and its
// share of a GPU in gres/gpu (1/7), so GPU-seconds, sreport's GPU-hours
// and billing by gres/gpu charge a slice its fraction, alike on every
// vendor.
// c.mu held (it reads node inventories for the devices' types).
func (c *Controller) allocTRESLocked(j *job) accounting.TRES {
	return c.allocTRESOn(c.st.nodes, j, j.Core.Alloc, j.Core.Partition)
}

// allocTRESOn is allocTRESLocked for an allocation of j in partition,
// reading the inventories of nodes: the allocation a start is about to
// give, or a job of a state being loaded.
func (c *Controller) allocTRESOn(nodes map[string]*node, j *job, alloc []core.NodeAlloc, partition string) accounting.TRES {
	if len(alloc) == 0 {
		return nil
	}
	t := accounting.TRES{accounting.TRESNode: float64(len(alloc))}
	for _, a := range alloc {
		t[accounting.TRESCPU] += float64(a.CPUs.Count())
		if a.MemoryMB > 0 {
			t[accounting.TRESMem] += float64(a.MemoryMB)
		}
		n := nodes[a.Node]
		for _, uuid := range a.Devices {
			t[accounting.TRESGPU] += deviceShare(n, uuid)
			if typ := deviceType(n, uuid, j); typ != "" {
				t[accounting.TRESGPU+":"+typ]++
			}
		}
	}
	return c.billing.WithBilling(partition, t)
}

// billingRate is what a run of j on alloc in partition is charged a
// second of fair-share usage: its billing, the number the ledger
// records, so fair share and the ledger agree.
func (c *Controller) billingRate(nodes map[string]*node, j *job, alloc []core.NodeAlloc, partition string) float64 {
	return c.allocTRESOn(nodes, j, alloc, partition)[accounting.TRESBilling]
}

// deviceShare is the fraction of a GPU one allocated device counts
// as in gres/gpu: its share from the node's inventory, else 1 (a node not
// registered since a restart, whose devices are not known). The agent's
// discovery validates shares (gres.Inventory.Validate), so one that does
// not read came from elsewhere and counts as Slurm would count it: one.
func deviceShare(n *node, uuid string) float64 {
	if n != nil && n.Inventory != nil {
		if d, ok := n.Inventory.Device(uuid); ok {
			if share, err := d.Share(); err == nil {
				return share
			}
		}
	}
	return 1
}

// deviceType is the GRES type of one allocated device: from the
// node's inventory, else (a node not registered since a restart) the type
// the node set is configured with, else the single type the job asked for.
func deviceType(n *node, uuid string, j *job) string {
	if n != nil {
		if n.Inventory != nil {
			for i := range n.Inventory.Devices {
				if d := &n.Inventory.Devices[i]; d.UUID == uuid {
					return d.Type
				}
			}
		}
		if n.spec.GPUType != "" {
			return n.spec.GPUType
		}
	}
	typ := ""
	for _, rs := range [][]string{gpuTypes(j.Core.GRES.PerJob), gpuTypes(j.Core.GRES.PerNode), gpuTypes(j.Core.GRES.PerTask)} {
		for _, t := range rs {
			if typ != "" && t != typ {
				return ""
			}
			typ = t
		}
	}
	return typ
}

// gpuTypes lists the types named by a request's GPU terms.
func gpuTypes(rs gres.Requests) []string {
	var out []string
	for _, r := range rs {
		if r.Name == gresGPU && r.Type != "" {
			out = append(out, r.Type)
		}
	}
	return out
}
