package jobspec

import "testing"

// Without -n, the task count sbatch 22.05 gives the job, as the anchor
// printed it in NumTasks (and --test-only in its processors).
func TestTasksFromGPUsPerTask(t *testing.T) {
	cases := []struct {
		args   []string
		tasks  int
		source string
	}{
		{[]string{"-G", "4", "--gpus-per-task=2"}, 2, "derived from --gpus-per-task"},
		{[]string{"--gpus=h100:4", "--gpus-per-task=h100:1"}, 4, "derived from --gpus-per-task"},
		{[]string{"-G", "4", "--gpus-per-task=2", "-n", "2"}, 2, SourceCLI},
		{[]string{"-G", "4"}, 1, SourceDefault},
	}
	for _, tc := range cases {
		req := mustParse(t, "#!/bin/bash\nhostname\n", append(tc.args, "run.sh"), nil, testOpts())
		if req.NTasks != tc.tasks || req.Sources["ntasks"] != tc.source {
			t.Errorf("%q: %d tasks from %q, want %d from %q", tc.args, req.NTasks, req.Sources["ntasks"], tc.tasks, tc.source)
		}
	}
}

// Without -N or -w, the node count a GPU request implies, as slurmctld
// fixed it on the anchor (NumNodes=2-2 for -G 2 --gpus-per-node=1, and
// the job ran on n[1-2]).
func TestNodesFromGPUsPerNode(t *testing.T) {
	cases := []struct {
		args  []string
		nodes NodeRange
	}{
		{[]string{"-G", "2", "--gpus-per-node=1"}, NodeRange{Min: 2, Max: 2}},
		{[]string{"-G", "4", "--gres=gpu:2", "-n", "1"}, NodeRange{Min: 2, Max: 2}},
		{[]string{"-n", "4", "--gpus-per-task=1", "--gpus-per-node=2"}, NodeRange{Min: 2, Max: 2}},
		{[]string{"-n", "4", "--ntasks-per-gpu=2", "--gpus-per-node=1"}, NodeRange{Min: 2, Max: 2}},
		{[]string{"-G", "2", "--gpus-per-node=2"}, NodeRange{}},
		{[]string{"-G", "2"}, NodeRange{}},
	}
	for _, tc := range cases {
		req := mustParse(t, "#!/bin/bash\nhostname\n", append(tc.args, "run.sh"), nil, testOpts())
		if req.Nodes != tc.nodes {
			t.Errorf("%q: nodes %v, want %v", tc.args, req.Nodes, tc.nodes)
		}
	}
}
