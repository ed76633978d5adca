package jobspec

import (
	"strings"
	"testing"
)

// On the Slurm 22.05 anchor, --gpus-per-task and --ntasks-per-gpu without
// a GPU count need a task count sbatch has or derives from a fixed node
// count: --gpus-per-task=1 with -N 2 (also with --ntasks-per-node=1 or
// --cpus-per-gpu=4) was taken with NumTasks=2, with --ntasks-per-node=2
// alone NumTasks=2, and with -N 1-2 or nothing else refused;
// --ntasks-per-gpu=2 with -N 2 or -n 2 was taken, with -N 2-4, -N 1-2 or
// nothing else refused.
func TestGPUTaskOptionsNeedAFixedCount(t *testing.T) {
	tests := []struct {
		args   []string
		tasks  int
		option string // refused on this option; "" when taken
	}{
		{[]string{"--gpus-per-task=1", "-N", "2"}, 2, ""},
		{[]string{"--gpus-per-task=h100:1", "-N", "1"}, 1, ""},
		{[]string{"--gpus-per-task=1", "-N", "2", "--ntasks-per-node=1"}, 2, ""},
		{[]string{"--gpus-per-task=2", "-N", "4", "--cpus-per-gpu=4"}, 4, ""},
		{[]string{"--gpus-per-task=1", "--ntasks-per-node=2"}, 2, ""},
		{[]string{"--gpus-per-task=1", "-N", "1-2"}, 0, "--gpus-per-task"},
		{[]string{"--gpus-per-task=1", "-N", "1-2", "--ntasks-per-node=1"}, 0, "--gpus-per-task"},
		{[]string{"--gpus-per-task=1"}, 0, "--gpus-per-task"},
		{[]string{"--ntasks-per-gpu=2", "-N", "2"}, 0, ""},
		{[]string{"--ntasks-per-gpu=2", "-n", "2"}, 2, ""},
		{[]string{"--ntasks-per-gpu=2", "-N", "2-4"}, 0, "--ntasks-per-gpu"},
		{[]string{"--ntasks-per-gpu=2"}, 0, "--ntasks-per-gpu"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			req, err := Parse([]byte("#!/bin/sh\nhostname\n"), tc.args, nil, testOpts())
			if tc.option != "" {
				if err == nil || !strings.Contains(err.Error(), tc.option) {
					t.Fatalf("error %v; want a refusal naming %s", err, tc.option)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.tasks > 0 && req.NTasks != tc.tasks {
				t.Errorf("%d tasks, want %d", req.NTasks, tc.tasks)
			}
		})
	}
}
