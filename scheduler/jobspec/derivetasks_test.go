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
