package format

import (
	"strings"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// anchorNodes are the Slurm anchor's nodes as Parity lists them (64000
// MB each, partition gpu).
func anchorNodes() map[string]*pb.Node {
	out := map[string]*pb.Node{}
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		out[n] = &pb.Node{Name: n, Cpus: 16, MemoryMb: 64000, Partitions: []string{"gpu"}}
	}
	return out
}

// Each case is a held submission on the Slurm 22.05 anchor (4 nodes × 8
// H100, 64000 MB, no accounting; sbatch --hold --parsable <options>
// a.sh in /tmp/cw, then scontrol show job -o and squeue -o), with the
// fields Slurm printed for it.
func TestShowJobAsSlurm2205Prints(t *testing.T) {
	held := func(id uint64, s *pb.JobSpec) *pb.Job {
		if s.Workdir == "" {
			s.Workdir = "/tmp/cw"
		}
		return &pb.Job{Id: id, User: "root", State: "PENDING", Reason: "None", Hold: "user", Partition: "gpu", SubmitTime: ts(0), Spec: s}
	}
	begin := ts(time.Hour)
	cases := []struct {
		name   string
		job    *pb.Job
		want   map[string]string
		absent []string
	}{
		{"held: the hold is the reason from the submit on", held(72, &pb.JobSpec{Name: "t1"}),
			map[string]string{"Reason": "JobHeldUser", "NodeList": "", "NumNodes": "1", "TRES": "cpu=1,mem=62.50G,node=1,billing=1",
				"Scheduler": "Main", "Power": "", "StdOut": "/tmp/cw/slurm-72.out", "MinCPUsNode": "1"},
			[]string{"Reservation", "ReqTRES", "AllocTRES", "MailUser", "ArrayTaskThrottle"}},
		{"-a 1-10:2%3 --mail-type=END -o ./logs/%x-%j-%N-%J-%A-%a.out",
			&pb.Job{Id: 73, ArrayJobId: 73, ArrayName: "73_[1-9:2%3]", User: "root", State: "PENDING", Hold: "user", Partition: "gpu",
				Spec: &pb.JobSpec{Name: "t1", Workdir: "/tmp/cw", Array: "1-10:2%3", MailType: []string{"END"}, Output: "./logs/%x-%j-%N-%J-%A-%a.out"}},
			map[string]string{"ArrayTaskId": "1,3,5,7,9%3", "ArrayTaskThrottle": "3", "MailUser": "root", "MailType": "END",
				"StdOut": "/tmp/cw/./logs/t1-73-%N-%J-73-4294967294.out"}, nil},
		{"-N 2 --gres=gpu --mail-type=ALL,END -d afterok:5", held(80, &pb.JobSpec{Nodes: 2, MaxNodes: 2, Ntasks: 2, GresOption: "gpu",
			Gres: &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Count: 1}}}, MailType: []string{"ALL", "END"}, Dependency: "afterok:5"}),
			map[string]string{"NumNodes": "2-2", "TRES": "cpu=2,mem=125G,node=2,billing=2", "TresPerNode": "gres:gpu",
				"MailType": "INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT", "Dependency": "afterok:5(unfulfilled)"}, nil},
		{"-G h100:2 --mem-per-gpu=4G --cpus-per-gpu=2 --ntasks-per-node=2", held(81, &pb.JobSpec{GpusOption: "h100:2", MemPerGpuMb: 4096,
			CpusPerGpu: 2, NtasksPerNode: 2, Gres: &pb.GRESRequest{PerJob: []*pb.GRESTerm{{Name: "gpu", Type: "h100", Count: 2}}}}),
			map[string]string{"TresPerJob": "gres:gpu:h100:2", "MemPerTres": "gres:gpu:4096", "CpusPerTres": "gres:gpu:2",
				"MinMemoryNode": "0", "MinCPUsNode": "2", "TRES": "cpu=2,mem=8G,node=1,billing=2"}, []string{"MinMemoryGPU"}},
		{"-w n[1-2] --mem-per-cpu=1000 -n 4 --begin=now+1hour", held(82, &pb.JobSpec{Nodes: 2, MaxNodes: 2, Nodelist: []string{"n1", "n2"},
			MemPerCpuMb: 1000, Ntasks: 4, Begin: begin, DerivedOptions: []string{"nodes"}}),
			map[string]string{"NumNodes": "2", "TRES": "cpu=4,mem=4000M,node=2,billing=4", "EligibleTime": "2025-06-02T10:00:00",
				"StartTime": "2025-06-02T10:00:00"}, nil},
		{"-n 64 (compat g1010)", held(83, &pb.JobSpec{Ntasks: 64}), map[string]string{"NumNodes": "4", "NumCPUs": "64",
			"TRES": "cpu=64,mem=62.50G,node=1,billing=64"}, nil},
		{"--ntasks-per-node 1 --ntasks=4 (compat g0522)", held(84, &pb.JobSpec{Ntasks: 4, NtasksPerNode: 1}),
			map[string]string{"NumNodes": "4"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := ShowJobs(&b, []*pb.Job{tc.job}, ShowOptions{Env: env, OneLiner: true, Nodes: anchorNodes()}); err != nil {
				t.Fatal(err)
			}
			got := pairs(t, b.String(), true)[0]
			for k, v := range tc.want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("%s=%q (present %v), want %q\n%s", k, g, ok, v, b.String())
				}
			}
			for _, k := range tc.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s printed (%q); Slurm prints none", k, got[k])
				}
			}
		})
	}
}

// squeue -o on the same anchor jobs.
func TestSqueueAsSlurm2205Prints(t *testing.T) {
	array := &pb.Job{Id: 73, ArrayJobId: 73, ArrayName: "73_[1-9:2%3]", User: "root", State: "PENDING", Hold: "user",
		Partition: "gpu", Spec: &pb.JobSpec{Array: "1-10:2%3"}}
	l, err := ParseSqueueFormat("%i|%K|%r|%R|%p|%B|%n|%x|%z|%d|%w|%H")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Squeue(&b, []*pb.Job{array}, l, SqueueOptions{Env: env, NoHeader: true}); err != nil {
		t.Fatal(err)
	}
	want := "73_[1,3,5,7,9%3]|1,3,5,7,9%3|JobHeldUser|(JobHeldUser)|0.00000000000000|n/a|||*:*:*|0|(null)|*"
	if got := strings.TrimSpace(b.String()); got != want {
		t.Errorf("squeue -o:\n got %s\nwant %s", got, want)
	}
}

// sbatch options scontrol shows travel to the controller and print as
// on the anchor: `sbatch --hold --gpus=h100:2 --ntasks-per-gpu=2
// --mincpus=4 -s --kill-on-invalid-dep=no` showed NumTasks=4 NumCPUs=4
// MinCPUsNode=4 OverSubscribe=YES KillOInInvalidDependent=No
// NtasksPerTRES=2 (compat corpus cases g0279, g0011, g0029, g0004).
func TestSbatchOptionsScontrolShows(t *testing.T) {
	req, err := jobspec.Parse([]byte("#!/bin/bash\nhostname\n"),
		[]string{"--gpus=h100:2", "--ntasks-per-gpu=2", "--mincpus=4", "-s", "--kill-on-invalid-dep=no", "job.sh"}, nil,
		jobspec.ParseOptions{Now: t0, User: "root", SubmitDir: "/tmp/cw"})
	if err != nil {
		t.Fatal(err)
	}
	j := &pb.Job{Id: 90, User: "root", State: "PENDING", Hold: "user", Partition: "gpu", Spec: Spec(req)}
	var b strings.Builder
	if err := ShowJobs(&b, []*pb.Job{j}, ShowOptions{Env: env, OneLiner: true, Nodes: anchorNodes()}); err != nil {
		t.Fatal(err)
	}
	got := pairs(t, b.String(), true)[0]
	for k, v := range map[string]string{"NumTasks": "4", "NumCPUs": "4", "MinCPUsNode": "4", "OverSubscribe": "YES",
		"KillOInInvalidDependent": "No", "NtasksPerTRES": "2", "TresPerJob": "gres:gpu:h100:2"} {
		if got[k] != v {
			t.Errorf("%s=%q, want %q\n%s", k, got[k], v, b.String())
		}
	}
}
