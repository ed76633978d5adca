package format

import (
	"strings"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// Each case is what the Slurm 22.05 anchor (4 nodes of 16 CPUs, 64000 MB,
// 8 H100; sbatch --hold --parsable <options> j.sh, then scontrol show job
// -o and squeue -o %D|%C|%c) printed, with the spec Parity's sbatch sends
// for the options ("derived" lists the counts sbatch derived).
func TestPendingCountsAsSlurm2205(t *testing.T) {
	gpus := func(perJob, perNode, perTask int64) *pb.GRESRequest {
		g := &pb.GRESRequest{}
		if perJob > 0 {
			g.PerJob = []*pb.GRESTerm{{Name: "gpu", Count: perJob}}
		}
		if perNode > 0 {
			g.PerNode = []*pb.GRESTerm{{Name: "gpu", Count: perNode}}
		}
		if perTask > 0 {
			g.PerTask = []*pb.GRESTerm{{Name: "gpu", Count: perTask}}
		}
		return g
	}
	both := []string{"nodes", "ntasks"}
	cases := []struct {
		name string
		spec *pb.JobSpec
		// numNodes, numCPUs, numTasks, tres, then squeue's %D|%C|%c.
		numNodes, numCPUs, numTasks, tres, queue string
	}{
		{"-N 2", &pb.JobSpec{Nodes: 2, MaxNodes: 2, Ntasks: 2, DerivedOptions: []string{"ntasks"}},
			"2-2", "2", "2", "cpu=2,mem=125G,node=2,billing=2", "2|2|1"},
		{"-N 2-4 -c 4", &pb.JobSpec{Nodes: 2, MaxNodes: 4, Ntasks: 2, CpusPerTask: 4, DerivedOptions: []string{"ntasks"}},
			"2-4", "4", "2", "cpu=4,mem=125G,node=2,billing=4", "2|4|4"},
		{"-n 3 -c 4", &pb.JobSpec{Ntasks: 3, CpusPerTask: 4, DerivedOptions: []string{"nodes"}},
			"2", "12", "3", "cpu=12,mem=62.50G,node=1,billing=12", "2|12|4"},
		{"-n 1 -c 16", &pb.JobSpec{Ntasks: 1, CpusPerTask: 16, DerivedOptions: []string{"nodes"}},
			"1", "16", "1", "cpu=16,mem=62.50G,node=1,billing=16", "1|16|16"},
		{"-c 4", &pb.JobSpec{Ntasks: 1, CpusPerTask: 4, DerivedOptions: both},
			"1", "4", "1", "cpu=4,mem=62.50G,node=1,billing=4", "1|4|4"},
		{"-n 33", &pb.JobSpec{Ntasks: 33, DerivedOptions: []string{"nodes"}},
			"3", "33", "33", "cpu=33,mem=62.50G,node=1,billing=33", "3|33|1"},
		{"-n 10 --ntasks-per-node=3", &pb.JobSpec{Ntasks: 10, NtasksPerNode: 3, DerivedOptions: []string{"nodes"}},
			"3", "10", "10", "cpu=10,mem=62.50G,node=1,billing=10", "3|10|3"},
		{"-N 1-2 -n 64", &pb.JobSpec{Nodes: 1, MaxNodes: 2, Ntasks: 64},
			"2-2", "64", "64", "cpu=64,mem=62.50G,node=1,billing=64", "4|64|1"},
		{"-N 4 -n 1 (sbatch trims -N to 1)", &pb.JobSpec{Nodes: 1, MaxNodes: 4, Ntasks: 1},
			"1-1", "1", "1", "cpu=1,mem=62.50G,node=1,billing=1", "1|1|1"},
		{"-w n[1-3] -n 2", &pb.JobSpec{Nodes: 2, MaxNodes: 3, Ntasks: 2, Nodelist: []string{"n1", "n2", "n3"}, DerivedOptions: []string{"nodes"}},
			"2-2", "2", "2", "cpu=2,mem=125G,node=2,billing=2", "2|2|1"},
		{"-G 4 --gpus-per-node=2 -c 3", &pb.JobSpec{Ntasks: 1, CpusPerTask: 3, Gres: gpus(4, 2, 0), DerivedOptions: both},
			"2-2", "3", "2", "cpu=3,mem=125G,node=2,billing=3", "2|3|3"},
		{"-N 0", &pb.JobSpec{Ntasks: 1, EmptyOptions: []string{"nodes"}, DerivedOptions: both},
			"0", "0", "0", "(null)", "0|0|1"},
		{"-N 0 -c 8", &pb.JobSpec{Ntasks: 1, CpusPerTask: 8, EmptyOptions: []string{"nodes"}, DerivedOptions: both},
			"0", "8", "0", "cpu=8,billing=8", "0|8|8"},
		{"-N 0 -n 4 --mem-per-cpu=1000", &pb.JobSpec{Ntasks: 4, MemPerCpuMb: 1000, EmptyOptions: []string{"nodes"}, DerivedOptions: []string{"nodes"}},
			"1", "4", "4", "cpu=4,mem=4000M,billing=4", "1|4|1"},
		{"-w ''", &pb.JobSpec{Ntasks: 1, EmptyOptions: []string{"nodeList"}, DerivedOptions: both},
			"0", "0", "0", "(null)", "0|0|1"},
		{"--gpus-per-task=2 --cpus-per-gpu=4 -n 2 --ntasks-per-node=2", &pb.JobSpec{Ntasks: 2, NtasksPerNode: 2, CpusPerGpu: 4,
			Gres: gpus(0, 0, 2), DerivedOptions: []string{"nodes"}},
			"1", "2", "2", "cpu=2,mem=62.50G,node=1,billing=2", "1|2|16"},
		{"-n 1 --ntasks-per-node=17", &pb.JobSpec{Ntasks: 1, NtasksPerNode: 17, DerivedOptions: []string{"nodes"}},
			"1", "1", "1", "cpu=1,mem=62.50G,node=1,billing=1", "1|1|1"},
		{"-n 4 --gpus-per-task=1 --gpus-per-node=2 (sbatch derives 2 nodes)", &pb.JobSpec{Nodes: 2, MaxNodes: 2, Ntasks: 4,
			Gres:           &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Count: 2}}, PerTask: []*pb.GRESTerm{{Name: "gpu", Count: 1}}},
			DerivedOptions: []string{"nodes"}},
			"2", "4", "4", "cpu=4,mem=62.50G,node=1,billing=4", "2|4|2"},
		{"-n 1 -G 4 --gpus-per-node=2", &pb.JobSpec{Nodes: 2, MaxNodes: 2, Ntasks: 1, Gres: gpus(4, 2, 0), DerivedOptions: []string{"nodes"}},
			"2-2", "1", "1", "cpu=1,mem=125G,node=2,billing=1", "2|1|1"},
		{"--mem=32000", &pb.JobSpec{Ntasks: 1, MemPerNodeMb: 32000, DerivedOptions: both},
			"1", "1", "1", "cpu=1,mem=32000M,node=1,billing=1", "1|1|1"},
		{"--mem=1536", &pb.JobSpec{Ntasks: 1, MemPerNodeMb: 1536, DerivedOptions: both},
			"1", "1", "1", "cpu=1,mem=1.50G,node=1,billing=1", "1|1|1"},
	}
	layout, err := ParseSqueueFormat("%D|%C|%c")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := &pb.Job{Id: 7, User: "root", State: "PENDING", Hold: "user", Partition: "gpu", SubmitTime: ts(0), Spec: tc.spec}
			var b strings.Builder
			if err := ShowJobs(&b, []*pb.Job{j}, ShowOptions{Env: env, OneLiner: true, Nodes: anchorNodes()}); err != nil {
				t.Fatal(err)
			}
			got := pairs(t, b.String(), true)[0]
			for k, want := range map[string]string{"NumNodes": tc.numNodes, "NumCPUs": tc.numCPUs, "NumTasks": tc.numTasks, "TRES": tc.tres} {
				if got[k] != want {
					t.Errorf("%s=%q, want %q", k, got[k], want)
				}
			}
			var q strings.Builder
			e := env
			e.NodeCPUs = map[string]int{"gpu": 16}
			if err := Squeue(&q, []*pb.Job{j}, layout, SqueueOptions{Env: e, NoHeader: true}); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(q.String()); got != tc.queue {
				t.Errorf("squeue %%D|%%C|%%c = %q, want %q", got, tc.queue)
			}
		})
	}
}

// Empty options print as Slurm keeps them: an empty string where one
// never given prints (null).
func TestEmptyOptionsPrintEmpty(t *testing.T) {
	j := &pb.Job{Id: 7, User: "root", State: "PENDING", Hold: "user", Partition: "gpu", Spec: &pb.JobSpec{Ntasks: 1,
		EmptyOptions: []string{"account", "constraint", "exclude", "comment"}, KillOnInvalidDepBoth: true, KillOnInvalidDep: true}}
	var b strings.Builder
	if err := ShowJobs(&b, []*pb.Job{j}, ShowOptions{Env: env, OneLiner: true, Nodes: anchorNodes()}); err != nil {
		t.Fatal(err)
	}
	got := pairs(t, b.String(), true)[0]
	want := map[string]string{"Account": "", "Features": "", "ExcNodeList": "", "ReqNodeList": "(null)", "Comment": "",
		"KillOInInvalidDependent": "YesKillOInInvalidDependent=No"}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s=%q (present %v), want %q\n%s", k, g, ok, v, b.String())
		}
	}
	layout, err := ParseSqueueFormat("%a|%f|%q")
	if err != nil {
		t.Fatal(err)
	}
	var q strings.Builder
	if err := Squeue(&q, []*pb.Job{j}, layout, SqueueOptions{Env: env, NoHeader: true}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(q.String()); got != "||(null)" {
		t.Errorf("squeue %%a|%%f|%%q = %q, want %q", got, "||(null)")
	}
}
