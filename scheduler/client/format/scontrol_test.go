package format

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// pairs parses scontrol output into records of Key=Value maps, checking
// the layout (first line flush, the rest indented by three spaces, a
// blank line after each record) on the way.
func pairs(t *testing.T, out string, oneLine bool) []map[string]string {
	t.Helper()
	var recs []map[string]string
	cur := map[string]string{}
	for i, line := range strings.Split(out, "\n") {
		switch {
		case line == "":
			if len(cur) > 0 {
				recs = append(recs, cur)
				cur = map[string]string{}
			}
			continue
		case oneLine && strings.HasPrefix(line, " "):
			t.Errorf("line %d of a one-line record is indented: %q", i, line)
		case !oneLine && len(cur) > 0 && !strings.HasPrefix(line, "   "):
			t.Errorf("continuation line %d is not indented: %q", i, line)
		case !oneLine && len(cur) == 0 && strings.HasPrefix(line, " "):
			t.Errorf("first line %d is indented: %q", i, line)
		}
		for _, f := range splitPairs(line) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				t.Errorf("line %d: %q is not Key=Value", i, f)
			}
			cur[k] = v
		}
	}
	return recs
}

// splitPairs splits at spaces that begin a new Key= (values may hold spaces).
func splitPairs(line string) []string {
	var out []string
	for _, w := range strings.Fields(line) {
		if len(out) > 0 && !strings.Contains(w, "=") {
			out[len(out)-1] += " " + w
			continue
		}
		out = append(out, w)
	}
	return out
}

func TestShowJob(t *testing.T) {
	jobs := testJobs()
	var b strings.Builder
	if err := ShowJobs(&b, jobs[:2], ShowOptions{Env: env, Details: true, Nodes: map[string]*pb.Node{"n001": testNodes()[0]}}); err != nil {
		t.Fatal(err)
	}
	recs := pairs(t, b.String(), false)
	if len(recs) != 2 {
		t.Fatalf("%d records:\n%s", len(recs), b.String())
	}
	// A planned pending job ends its limit after its planned start, as
	// the anchor's scontrol shows one (StartTime=15:18:14
	// EndTime=15:25:14 for -t 7).
	want := []map[string]string{
		{"JobId": "12", "JobName": "train-llm-big", "UserId": "alice(N/A)", "GroupId": "N/A(N/A)", "MCS_label": "N/A", "Priority": "1500", "Account": "physics", "QOS": "normal",
			"JobState": "PENDING", "Reason": "Resources", "Dependency": "(null)", "ExitCode": "0:0", "RunTime": "00:00:00",
			"TimeLimit": "01:00:00", "StartTime": "2025-06-02T12:00:00", "EndTime": "2025-06-02T13:00:00", "Partition": "gpu", "NodeList": "",
			"NumNodes": "1-1", "NumCPUs": "32", "NumTasks": "4", "CPUs/Task": "8", "TRES": "cpu=32,mem=64G,node=1,billing=32",
			"MinMemoryNode": "64G", "StdOut": "/home/alice/logs/train-llm-big-12.out",
			"StdErr": "/home/alice/logs/train-llm-big-12.out", "StdIn": "/dev/null", "TresPerNode": "gres:gpu:h100:4"},
		{"JobId": "7", "JobState": "RUNNING", "Reason": "None", "Requeue": "1", "RunTime": "02:00:30", "TimeLimit": "1-01:00:00",
			"StartTime": "2025-06-02T08:59:30", "EndTime": "2025-06-03T09:59:30", "NodeList": "n[001-002]", "BatchHost": "n001",
			"NumNodes": "2", "NumCPUs": "32", "TRES": "cpu=32,mem=4G,node=2,billing=32", "StdOut": "/w/slurm-7.out",
			"Nodes": "n002", "GRES": "gpu:2(GPU-2a,GPU-2b)"},
	}
	for i, w := range want {
		for k, v := range w {
			if recs[i][k] != v {
				t.Errorf("job %s: %s=%q, want %q", w["JobId"], k, recs[i][k], v)
			}
		}
	}
	// -d on node n001, whose GPUs are known, names devices by index.
	if !strings.Contains(b.String(), "Nodes=n001 CPU_IDs=0-15 Mem=2048 GRES=gpu:h100:2(IDX:0-1)") {
		t.Errorf("missing detail line for n001:\n%s", b.String())
	}
	held := jobs[2]
	held.Reason = "Nodes required for job are DOWN"
	b.Reset()
	if err := ShowJobs(&b, []*pb.Job{held}, ShowOptions{Env: env, OneLiner: true}); err != nil {
		t.Fatal(err)
	}
	one := pairs(t, b.String(), true)
	mustEqual(t, "one-line records", len(lines(b.String())), 1)
	mustEqual(t, "spaces in Reason", one[0]["Reason"], "Nodes_required_for_job_are_DOWN")
}

func TestShowJobOwner(t *testing.T) {
	users := func(name string) (UserIDs, bool) {
		if name == "root" {
			return UserIDs{UID: "0", Group: "root", GID: "0"}, true
		}
		return UserIDs{}, false
	}
	cases := []struct {
		user  string
		users func(string) (UserIDs, bool)
		want  string
	}{
		// As Slurm 22.05 prints it.
		{"root", users, "   UserId=root(0) GroupId=root(0) MCS_label=N/A"},
		{"ghost", users, "   UserId=ghost(N/A) GroupId=N/A(N/A) MCS_label=N/A"},
		{"root", nil, "   UserId=root(N/A) GroupId=N/A(N/A) MCS_label=N/A"},
	}
	for _, c := range cases {
		var b strings.Builder
		j := &pb.Job{Id: 5, User: c.user, State: "PENDING", Spec: &pb.JobSpec{Name: "x"}}
		if err := ShowJobs(&b, []*pb.Job{j}, ShowOptions{Env: env, Users: c.users}); err != nil {
			t.Fatal(err)
		}
		out := lines(b.String())
		mustEqual(t, "first line", out[0], "JobId=5 JobName=x")
		mustEqual(t, c.user+" second line", out[1], c.want)
	}
}

func TestShowNodeAndPartition(t *testing.T) {
	var b strings.Builder
	if err := ShowNodes(&b, testNodes()[:3], ShowOptions{Env: env, Details: true}); err != nil {
		t.Fatal(err)
	}
	recs := pairs(t, b.String(), false)
	want := []map[string]string{
		{"NodeName": "n001", "CPUAlloc": "16", "CPUTot": "64", "Gres": "gpu:h100:4", "GresUsed": "gpu:h100:2(IDX:0-1)",
			"GresDrain": "gpu:h100:1(IDX:3)", "State": "MIXED", "AvailableFeatures": "h100,nvlink", "Partitions": "gpu",
			"CfgTRES": "cpu=64,mem=500G,gres/gpu=4", "AllocTRES": "cpu=16,mem=0M,gres/gpu=2"},
		{"NodeName": "n002", "GresDrain": ""},
		{"NodeName": "n003", "State": "IDLE+DRAIN", "Reason": "bad fan [olga@2025-06-02T08:00:00]", "GresUsed": "gpu:h100:4(IDX:N/A)",
			"Partitions": "gpu,debug", "AllocTRES": "(null)"},
	}
	for i, w := range want {
		for k, v := range w {
			if recs[i][k] != v {
				t.Errorf("node %s: %s=%q, want %q", w["NodeName"], k, recs[i][k], v)
			}
		}
	}
	if !strings.Contains(b.String(), "GPU=3 GpuType=h100 UUID=GPU-1d GpuState=drain GpuReason=xid 79") {
		t.Errorf("missing per-GPU detail:\n%s", b.String())
	}
	b.Reset()
	if err := ShowPartitions(&b, testPartitions()[:2], ShowOptions{}); err != nil {
		t.Fatal(err)
	}
	parts := pairs(t, b.String(), false)
	mustEqual(t, "partitions", len(parts), 2)
	for k, v := range map[string]string{"PartitionName": "gpu", "Default": "YES", "DefaultTime": "01:00:00", "MaxTime": "2-00:00:00",
		"Nodes": "n[001-004]", "State": "UP", "TotalNodes": "4", "PriorityTier": "2", "TRES": "cpu=256,node=4,gres/gpu=16"} {
		mustEqual(t, "gpu "+k, parts[0][k], v)
	}
	for k, v := range map[string]string{"Default": "NO", "DefaultTime": "NONE", "MaxTime": "00:30:00"} {
		mustEqual(t, "debug "+k, parts[1][k], v)
	}
	keys := strings.Fields(lines(b.String())[0])
	if !slices.Equal(keys, []string{"PartitionName=gpu"}) {
		t.Errorf("first line = %q", keys)
	}
}

// TestShowPartitionAsSlurm: every key of Slurm 22.05's record, in its order
// (the real one for partition gpu of four 16-CPU nodes, less billing).
func TestShowPartitionAsSlurm(t *testing.T) {
	p := &pb.Partition{Name: "gpu", Nodes: "n[1-4]", Default: true, State: "up", TotalNodes: 4, TotalCpus: 64,
		TotalMemoryMb: 256000, PriorityTier: 1, PriorityJobFactor: 1, PreemptMode: "OFF"}
	var b strings.Builder
	if err := ShowPartitions(&b, []*pb.Partition{p}, ShowOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `PartitionName=gpu
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   AllocNodes=ALL Default=YES QoS=N/A
   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO
   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED
   Nodes=n[1-4]
   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   OverTimeLimit=NONE PreemptMode=OFF
   State=UP TotalCPUs=64 TotalNodes=4 SelectTypeParameters=NONE
   JobDefaults=(null)
   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED
   TRES=cpu=64,mem=250G,node=4

`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	p.MaxNodes, p.MinNodes, p.DefMemPerCpuMb, p.BillingWeights, p.PreemptMode, p.GraceTimeSeconds = 2, 1, 4000, "CPU=1.0,GRES/gpu=2.0", "REQUEUE", 30
	if err := ShowPartitions(&b, []*pb.Partition{p}, ShowOptions{}); err != nil {
		t.Fatal(err)
	}
	got := pairs(t, b.String(), false)[0]
	for k, v := range map[string]string{"MaxNodes": "2", "MinNodes": "1", "DefMemPerCPU": "4000", "TRESBillingWeights": "CPU=1.0,GRES/gpu=2.0",
		"PreemptMode": "REQUEUE", "GraceTime": "30"} {
		mustEqual(t, k, got[k], v)
	}
}

// TestShowNodeCPULayout: the keys Slurm prints for a node's CPUs, from the
// layout its agent registered.
func TestShowNodeCPULayout(t *testing.T) {
	n := &pb.Node{Name: "n1", State: "IDLE", Cpus: 16, MemoryMb: 64000, Sockets: 2, CoresPerSocket: 8, ThreadsPerCore: 1}
	var b strings.Builder
	if err := ShowNodes(&b, []*pb.Node{n}, ShowOptions{Env: env}); err != nil {
		t.Fatal(err)
	}
	got := pairs(t, b.String(), false)[0]
	for k, v := range map[string]string{"CoresPerSocket": "8", "Sockets": "2", "ThreadsPerCore": "1", "CPUEfctv": "16", "CPUTot": "16",
		"Boards": "1", "TmpDisk": "0", "Weight": "1", "Owner": "N/A", "MCS_label": "N/A"} {
		mustEqual(t, k, got[k], v)
	}
	mustEqual(t, "first line", lines(b.String())[0], "NodeName=n1 CoresPerSocket=8")
}

// TestShowJobSlurmKeys: the keys Slurm 22.05 prints for options Parity
// does not take are there with Slurm's defaults, and a held job's
// AccrueTime is Unknown.
func TestShowJobSlurmKeys(t *testing.T) {
	at := timestamppb.New(time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC))
	for _, c := range []struct {
		hold, accrue string
	}{{"", "2025-06-02T08:00:00"}, {"user", "Unknown"}} {
		j := &pb.Job{Id: 5, State: "PENDING", Hold: c.hold, EligibleTime: at, Spec: &pb.JobSpec{Name: "x", NtasksPerNode: 2}}
		var b strings.Builder
		if err := ShowJobs(&b, []*pb.Job{j}, ShowOptions{Env: env}); err != nil {
			t.Fatal(err)
		}
		got := pairs(t, b.String(), false)[0]
		for k, v := range map[string]string{"AccrueTime": c.accrue, "ReqB:S:C:T": "0:0:*:*", "Socks/Node": "*", "NtasksPerN:B:S:C": "2:0:*:*",
			"CoreSpec": "*", "MinTmpDiskNode": "0", "DelayBoot": "00:00:00", "Licenses": "(null)", "Network": "(null)"} {
			mustEqual(t, "hold "+c.hold+" "+k, got[k], v)
		}
	}
}
