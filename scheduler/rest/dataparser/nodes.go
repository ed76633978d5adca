package dataparser

import (
	"fmt"
	"slices"
	"strings"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

type NodesResp struct {
	Nodes      []*NodeInfo `json:"nodes"`
	LastUpdate *NoVal      `json:"last_update"`
	Envelope
}

// NodeInfo is v0.0.44_node.
type NodeInfo struct {
	Name            string   `json:"name"`
	Hostname        string   `json:"hostname"`
	ClusterName     string   `json:"cluster_name"`
	State           []string `json:"state"`
	CPUs            int32    `json:"cpus"`
	EffectiveCPUs   int32    `json:"effective_cpus"`
	Cores           int32    `json:"cores"`
	Sockets         int32    `json:"sockets"`
	Threads         int32    `json:"threads"`
	Boards          int32    `json:"boards"`
	RealMemory      int64    `json:"real_memory"`
	AllocMemory     int64    `json:"alloc_memory"`
	AllocCPUs       int32    `json:"alloc_cpus"`
	AllocIdleCPUs   int32    `json:"alloc_idle_cpus"`
	Features        []string `json:"features"`
	ActiveFeatures  []string `json:"active_features"`
	Partitions      []string `json:"partitions"`
	Gres            string   `json:"gres"`
	GresUsed        string   `json:"gres_used"`
	GresDrained     string   `json:"gres_drained"`
	Reason          string   `json:"reason"`
	ReasonSetBy     string   `json:"reason_set_by_user"`
	ReasonChangedAt *NoVal   `json:"reason_changed_at"`
	LastBusy        *NoVal   `json:"last_busy"`
	Tres            string   `json:"tres"`
	TresUsed        string   `json:"tres_used"`
}

type PartitionsResp struct {
	Partitions []*PartitionInfo `json:"partitions"`
	LastUpdate *NoVal           `json:"last_update"`
	Envelope
}

// PartitionInfo is v0.0.44_partition_info.
type PartitionInfo struct {
	Name    string `json:"name"`
	Cluster string `json:"cluster"`
	Nodes   struct {
		Configured string `json:"configured"`
		Total      int32  `json:"total"`
	} `json:"nodes"`
	CPUs struct {
		Total int32 `json:"total"`
	} `json:"cpus"`
	Tres struct {
		BillingWeights string `json:"billing_weights"`
		Configured     string `json:"configured"`
	} `json:"tres"`
	Defaults struct {
		MemoryPerCPU          int64  `json:"memory_per_cpu"`
		PartitionMemoryPerCPU *NoVal `json:"partition_memory_per_cpu"`
		Time                  *NoVal `json:"time"`
	} `json:"defaults"`
	GraceTime int32 `json:"grace_time"`
	Maximums  struct {
		Nodes *NoVal `json:"nodes"`
		Time  *NoVal `json:"time"`
	} `json:"maximums"`
	Minimums struct {
		Nodes int32 `json:"nodes"`
	} `json:"minimums"`
	Priority struct {
		JobFactor int32 `json:"job_factor"`
		Tier      int32 `json:"tier"`
	} `json:"priority"`
	Partition struct {
		State []string `json:"state"`
	} `json:"partition"`
}

// ToNode maps a Parity node to v0.0.44_node.
func ToNode(n *pb.Node, cluster string) *NodeInfo {
	cores := n.GetSockets() * n.GetCoresPerSocket()
	ni := &NodeInfo{Name: n.GetName(), Hostname: n.GetName(), ClusterName: cluster, State: NodeState(n),
		CPUs: n.GetCpus(), EffectiveCPUs: n.GetCpus(), Cores: n.GetCoresPerSocket(), Sockets: n.GetSockets(),
		Threads: n.GetThreadsPerCore(), Boards: 1, RealMemory: n.GetMemoryMb(), AllocMemory: n.GetAllocMemoryMb(),
		AllocCPUs: n.GetAllocCpus(), AllocIdleCPUs: max(n.GetCpus()-n.GetAllocCpus(), 0),
		Features: OrEmpty(n.GetFeatures()), ActiveFeatures: OrEmpty(n.GetFeatures()), Partitions: OrEmpty(n.GetPartitions()),
		Reason: n.GetReason(), ReasonSetBy: n.GetReasonUser(), ReasonChangedAt: Epoch(n.GetReasonTime()),
		LastBusy: Epoch(n.GetLastHeartbeat())}
	if cores == 0 {
		ni.Cores = n.GetCpus()
	}
	gres, used, drained := GPUGres(n.GetGpus())
	ni.Gres, ni.GresUsed, ni.GresDrained = gres, used, drained
	ni.Tres = fmt.Sprintf("cpu=%d,mem=%dM,billing=%d", n.GetCpus(), n.GetMemoryMb(), n.GetCpus())
	if total := len(n.GetGpus()); total > 0 {
		ni.Tres += fmt.Sprintf(",gres/gpu=%d", total)
	}
	if n.GetAllocCpus() > 0 || n.GetAllocMemoryMb() > 0 {
		ni.TresUsed = fmt.Sprintf("cpu=%d,mem=%dM", n.GetAllocCpus(), n.GetAllocMemoryMb())
	}
	return ni
}

func OrEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// NodeState is Slurm's state list: the base state and its flags.
func NodeState(n *pb.Node) []string {
	base := strings.ToUpper(n.GetState())
	switch base {
	case "IDLE", "DOWN", "ALLOCATED", "MIXED", "UNKNOWN", "FUTURE":
	default:
		base = "UNKNOWN"
	}
	out := []string{base}
	for _, f := range n.GetFlags() {
		switch f := strings.ToUpper(f); f {
		case "DRAIN", "NOT_RESPONDING", "COMPLETING", "MAINTENANCE", "RESERVED", "FAIL":
			out = append(out, f)
		}
	}
	return out
}

// GPUGres is the node's gres, gres_used and gres_drained strings, by type.
func GPUGres(gpus []*pb.GPU) (string, string, string) {
	total, used, drained := map[string]int{}, map[string]int{}, map[string]int{}
	var types []string
	for _, g := range gpus {
		t := g.GetType()
		if _, ok := total[t]; !ok {
			types = append(types, t)
		}
		total[t]++
		switch g.GetState() {
		case "alloc":
			used[t]++
		case "drain":
			drained[t]++
		}
	}
	slices.Sort(types)
	var g, u, d []string
	for _, t := range types {
		name := "gpu"
		if t != "" {
			name += ":" + t
		}
		g = append(g, fmt.Sprintf("%s:%d", name, total[t]))
		u = append(u, fmt.Sprintf("%s:%d", name, used[t]))
		if drained[t] > 0 {
			d = append(d, fmt.Sprintf("%s:%d", name, drained[t]))
		}
	}
	return strings.Join(g, ","), strings.Join(u, ","), strings.Join(d, ",")
}

// ToPartition maps a Parity partition to v0.0.44_partition_info.
func ToPartition(p *pb.Partition, cluster string) *PartitionInfo {
	pi := &PartitionInfo{Name: p.GetName(), Cluster: cluster, GraceTime: int32(p.GetGraceTimeSeconds())}
	pi.Nodes.Configured, pi.Nodes.Total = p.GetNodes(), p.GetTotalNodes()
	pi.CPUs.Total = p.GetTotalCpus()
	pi.Tres.BillingWeights = p.GetBillingWeights()
	pi.Tres.Configured = fmt.Sprintf("cpu=%d,mem=%dM,node=%d,billing=%d", p.GetTotalCpus(), p.GetTotalMemoryMb(), p.GetTotalNodes(), p.GetTotalCpus())
	if g := p.GetTotalGpus(); g > 0 {
		pi.Tres.Configured += fmt.Sprintf(",gres/gpu=%d", g)
	}
	pi.Defaults.MemoryPerCPU = p.GetDefMemPerCpuMb()
	pi.Defaults.PartitionMemoryPerCPU = Unset()
	if p.GetDefMemPerCpuMb() > 0 {
		pi.Defaults.PartitionMemoryPerCPU = Num(p.GetDefMemPerCpuMb())
	}
	pi.Defaults.Time = MinutesOrInf(p.GetDefaultTimeSeconds())
	pi.Maximums.Time = MinutesOrInf(p.GetMaxTimeSeconds())
	pi.Maximums.Nodes = NumOrInf(int64(p.GetMaxNodes()))
	pi.Minimums.Nodes = p.GetMinNodes()
	pi.Priority.JobFactor, pi.Priority.Tier = p.GetPriorityJobFactor(), p.GetPriorityTier()
	state := strings.ToUpper(p.GetState())
	if state != "UP" && state != "DOWN" && state != "DRAIN" && state != "INACTIVE" {
		state = "UNKNOWN"
	}
	pi.Partition.State = []string{state}
	return pi
}

func MinutesOrInf(sec int64) *NoVal {
	if sec <= 0 {
		return Infinite()
	}
	return Num(int64((time.Duration(sec) * time.Second).Minutes()))
}
