package fromjobspec

import (
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/jobspec"
)

func TestSpecFromParsedScript(t *testing.T) {
	script := []byte(`#!/bin/bash
#SBATCH --job-name=train
#SBATCH --partition=gpu,debug
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=h100:4
#SBATCH --mem-per-cpu=4G
#SBATCH --time=1-02:00:00
#SBATCH --dependency=afterok:12
#SBATCH --signal=B:USR1@120
#SBATCH --array=0-3%2
srun python train.py
`)
	r, err := jobspec.Parse(script, []string{"--hold"}, map[string]string{"HOME": "/home/alice"}, jobspec.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := Spec(r)
	switch {
	case s.GetName() != "train", s.GetPartition() != "gpu", s.GetNodes() != 2, s.GetNtasksPerNode() != 4:
		t.Fatalf("basic fields: %v", s)
	case len(s.GetPartitions()) != 2 || s.GetPartitions()[1] != "debug":
		t.Fatalf("partitions: %v", s.GetPartitions())
	case s.GetMemPerCpuMb() != 4096 || s.GetMemPerNodeMb() != 0:
		t.Fatalf("memory: %v", s)
	case s.GetTimeLimitSeconds() != int64((26*time.Hour)/time.Second):
		t.Fatalf("time: %d", s.GetTimeLimitSeconds())
	case len(s.GetGres().GetPerNode()) != 1 || s.GetGres().GetPerNode()[0].GetType() != "h100" || s.GetGres().GetPerNode()[0].GetCount() != 4:
		t.Fatalf("gres: %v", s.GetGres())
	case s.GetGpusPerNodeOption() != "h100:4":
		t.Fatalf("typed option: %q", s.GetGpusPerNodeOption())
	case s.GetDependency() != "afterok:12" || s.GetArray() == "" || s.GetSignal() == "" || !s.GetHold():
		t.Fatalf("dependency %q array %q signal %q hold %v", s.GetDependency(), s.GetArray(), s.GetSignal(), s.GetHold())
	case s.GetScript() != string(script):
		t.Fatal("script text not carried")
	}
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int64{0: 0, jobspec.Unlimited: -1, time.Minute: 60, 1500 * time.Millisecond: 2} {
		if got := seconds(d); got != want {
			t.Errorf("seconds(%v) = %d, want %d", d, got, want)
		}
	}
}
