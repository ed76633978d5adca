package format

import (
	"cmp"
	"io"
	"strconv"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// ShowPartitions writes partitions as scontrol show partition does, every
// key Slurm 22.05 prints in its order; settings Parity does not have show
// Slurm's defaults (AllowGroups=ALL, Hidden=NO, ...), so scripts that read
// a key find it.
func ShowPartitions(w io.Writer, parts []*pb.Partition, o ShowOptions) error {
	recs := make([]record, len(parts))
	for i, p := range parts {
		def := "NONE"
		if p.GetDefaultTimeSeconds() > 0 {
			def = Clock(p.GetDefaultTimeSeconds())
		}
		maxNodes := "UNLIMITED"
		if p.GetMaxNodes() > 0 {
			maxNodes = strconv.Itoa(int(p.GetMaxNodes()))
		}
		mem := kv{"DefMemPerNode", "UNLIMITED"}
		if p.GetDefMemPerCpuMb() > 0 {
			mem = kv{"DefMemPerCPU", strconv.FormatInt(p.GetDefMemPerCpuMb(), 10)}
		}
		r := record{
			{{"PartitionName", p.GetName()}},
			{{"AllowGroups", "ALL"}, accessKV("Accounts", p.GetAllowAccounts(), p.GetDenyAccounts()), accessKV("Qos", p.GetAllowQos(), p.GetDenyQos())},
			{{"AllocNodes", "ALL"}, {"Default", yesNo(p.GetDefault())}, {"QoS", "N/A"}},
			{{"DefaultTime", def}, {"DisableRootJobs", "NO"}, {"ExclusiveUser", "NO"},
				{"GraceTime", strconv.FormatInt(p.GetGraceTimeSeconds(), 10)}, {"Hidden", "NO"}},
			{{"MaxNodes", maxNodes}, {"MaxTime", limitKV(p.GetMaxTimeSeconds())}, {"MinNodes", strconv.Itoa(int(p.GetMinNodes()))},
				{"LLN", "NO"}, {"MaxCPUsPerNode", "UNLIMITED"}},
			{{"Nodes", orNull(p.GetNodes())}},
			{{"PriorityJobFactor", strconv.Itoa(int(p.GetPriorityJobFactor()))}, {"PriorityTier", strconv.Itoa(int(p.GetPriorityTier()))},
				{"RootOnly", "NO"}, {"ReqResv", "NO"}, {"OverSubscribe", cmp.Or(p.GetOverSubscribe(), "NO")}},
			{{"OverTimeLimit", "NONE"}, {"PreemptMode", cmp.Or(p.GetPreemptMode(), "OFF")}},
			{{"State", strings.ToUpper(cmp.Or(p.GetState(), "up"))}, {"TotalCPUs", strconv.Itoa(int(p.GetTotalCpus()))},
				{"TotalNodes", strconv.Itoa(int(p.GetTotalNodes()))}, {"SelectTypeParameters", "NONE"}},
			{{"JobDefaults", "(null)"}},
			{mem, {"MaxMemPerNode", "UNLIMITED"}},
			{{"TRES", partitionTRES(p)}},
		}
		if bw := p.GetBillingWeights(); bw != "" {
			r = append(r, []kv{{"TRESBillingWeights", bw}})
		}
		recs[i] = r
	}
	return writeRecords(w, recs, o.OneLiner)
}

// partitionTRES is a partition's TRES= total: "cpu=64,mem=250G,node=4,gres/gpu=32".
func partitionTRES(p *pb.Partition) string {
	parts := []string{"cpu=" + strconv.Itoa(int(p.GetTotalCpus()))}
	if p.GetTotalMemoryMb() > 0 {
		parts = append(parts, "mem="+jobspec.FormatMemory(p.GetTotalMemoryMb()))
	}
	parts = append(parts, "node="+strconv.Itoa(int(p.GetTotalNodes())))
	if p.GetTotalGpus() > 0 {
		parts = append(parts, "gres/gpu="+strconv.Itoa(int(p.GetTotalGpus())))
	}
	return strings.Join(parts, ",")
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

// accessKV is AllowAccounts= (or AllowQos=): the list, or ALL; Slurm
// shows DenyAccounts= in its place when a deny list is set.
func accessKV(what string, allow, deny []string) kv {
	if len(deny) > 0 {
		return kv{"Deny" + what, strings.Join(deny, ",")}
	}
	if len(allow) > 0 {
		return kv{"Allow" + what, strings.Join(allow, ",")}
	}
	return kv{"Allow" + what, "ALL"}
}
