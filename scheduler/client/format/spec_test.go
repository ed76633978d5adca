package format

import (
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/jobspec"
)

func TestSpecFromParsedScript(t *testing.T) {
	script := "#!/bin/bash\n#SBATCH -J train\n#SBATCH -p gpu,debug\n#SBATCH --gres=gpu:h100:4\n#SBATCH -t 1-00:00:00\n" +
		"#SBATCH --mem=0\n#SBATCH -C h100&nvlink\n#SBATCH --array=0-7%2\n#SBATCH -d afterok:5\n#SBATCH --signal=B:USR1@120\nsrun x\n"
	req, err := jobspec.Parse([]byte(script), []string{"-N", "2", "--ntasks-per-node=4", "job.sh", "a1"},
		map[string]string{"SBATCH_TIMELIMIT": "30", "HOME": "/h"},
		jobspec.ParseOptions{Now: t0, User: "alice", SubmitDir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	s := Spec(req)
	checks := []struct {
		what      string
		got, want any
	}{
		{"name", s.GetName(), "train"},
		{"partition", s.GetPartition(), "gpu"},
		{"partitions", strings.Join(s.GetPartitions(), ","), "gpu,debug"},
		{"nodes", s.GetNodes(), int32(2)},
		{"max nodes", s.GetMaxNodes(), int32(2)},
		{"ntasks per node", s.GetNtasksPerNode(), int32(4)},
		{"time (SBATCH_TIMELIMIT beats the directive)", s.GetTimeLimitSeconds(), int64(30 * 60)},
		{"mem=0 is all of the node", s.GetMemPerNodeMb(), int64(-1)},
		{"gres term", s.GetGres().GetPerNode()[0].GetType(), "h100"},
		{"gres count", s.GetGres().GetPerNode()[0].GetCount(), int64(4)},
		{"gres option", s.GetGresOption(), "gpu:h100:4"},
		{"constraint", s.GetConstraint(), "h100&nvlink"},
		{"array", s.GetArray(), "0-7%2"},
		{"dependency", s.GetDependency(), "afterok:5"},
		{"signal", s.GetSignal(), "B:USR1@120"},
		{"argv", len(s.GetArgv()), 1},
		{"script", s.GetScript(), script},
		{"workdir", s.GetWorkdir(), "/w"},
		{"env", s.GetEnv()["HOME"], "/h"},
		{"requeue default", s.GetRequeue(), true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	for d, want := range map[time.Duration]int64{jobspec.Unlimited: -1, 90 * time.Second: 90, 0: 0} {
		if got := Spec(&jobspec.Request{TimeLimit: jobspec.Duration(d)}).GetTimeLimitSeconds(); got != want {
			t.Errorf("time limit %v = %d s, want %d", d, got, want)
		}
	}
}
