package jobspec

import (
	"slices"
	"testing"
)

// The batch step's SLURM_TASKS_PER_NODE as the anchor's Slurm 22.05 set
// it (testdata/envcorpus.jsonl of cmd/internal/compat).
func TestBatchLayoutTasksPerNode(t *testing.T) {
	cases := []struct {
		opts string
		l    BatchLayout
		want []int
	}{
		{"-c 2", BatchLayout{CPUsPerNode: []int{2}, CPUsPerTask: 2}, []int{1}},
		{"-J envjob", BatchLayout{CPUsPerNode: []int{1}}, []int{1}},
		{"-N 2 -c 4", BatchLayout{CPUsPerNode: []int{4, 4}, CPUsPerTask: 4}, []int{1, 1}},
		{"-G 2 --cpus-per-gpu=2 (salloc)", BatchLayout{CPUsPerNode: []int{4}}, []int{4}},
		{"-n 4 -c 2", BatchLayout{CPUsPerNode: []int{8}, NTasks: 4, CPUsPerTask: 2}, []int{4}},
		{"-n 1 --ntasks-per-node=2 -N 1", BatchLayout{CPUsPerNode: []int{1}, NTasks: 1, NTasksPerNode: 2}, []int{2}},
		{"--ntasks-per-node=2 -N 2", BatchLayout{CPUsPerNode: []int{2, 2}, NTasks: 4, NTasksPerNode: 2}, []int{2, 2}},
		// Slurm gave -G 2 --gpus-per-task=1 -c 4 four CPUs for two tasks:
		// the node is full after one, the second oversubscribes it.
		{"--gpus-per-task=1 -G 2 -c 4", BatchLayout{CPUsPerNode: []int{4}, NTasks: 2, CPUsPerTask: 4}, []int{2}},
		{"-n 4 over 2+2 CPUs", BatchLayout{CPUsPerNode: []int{2, 2}, NTasks: 4}, []int{2, 2}},
		{"-n 5 over 4+1 CPUs", BatchLayout{CPUsPerNode: []int{4, 1}, NTasks: 5}, []int{4, 1}},
		{"-n 7 over 2+2 CPUs", BatchLayout{CPUsPerNode: []int{2, 2}, NTasks: 7}, []int{4, 3}},
		{"no nodes", BatchLayout{}, []int{}},
	}
	for _, c := range cases {
		if got := c.l.TasksPerNode(); !slices.Equal(got, c.want) {
			t.Errorf("%s: TasksPerNode = %v, want %v", c.opts, got, c.want)
		}
	}
}

func TestAllocationCounts(t *testing.T) {
	got := AllocationCounts([]int{2, 2}, 2, 0, 1, []string{NTasksDefaulted, CPUsPerTaskDefaulted})
	want := map[string]string{"SLURM_JOB_CPUS_PER_NODE": "2(x2)", "SLURM_TASKS_PER_NODE": "2(x2)"}
	if len(got) != len(want) || got["SLURM_JOB_CPUS_PER_NODE"] != want["SLURM_JOB_CPUS_PER_NODE"] || got["SLURM_TASKS_PER_NODE"] != want["SLURM_TASKS_PER_NODE"] {
		t.Errorf("defaulted counts: %v, want %v", got, want)
	}
	got = AllocationCounts([]int{4}, 2, 2, 2, nil)
	for k, v := range map[string]string{"SLURM_NTASKS": "2", "SLURM_NPROCS": "2", "SLURM_NTASKS_PER_NODE": "2",
		"SLURM_CPUS_PER_TASK": "2", "SLURM_JOB_CPUS_PER_NODE": "4", "SLURM_TASKS_PER_NODE": "2"} {
		if got[k] != v {
			t.Errorf("given counts: %s=%q, want %q", k, got[k], v)
		}
	}
}

func TestParseRunLength(t *testing.T) {
	for in, want := range map[string][]int{"2": {2}, "4(x2)": {4, 4}, "2(x3),1": {2, 2, 2, 1}, "8,4(x2)": {8, 4, 4}} {
		got, err := ParseRunLength(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseRunLength(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back := RunLength(got); back != in {
			t.Errorf("RunLength(%v) = %q, want %q back", got, back, in)
		}
	}
	for _, bad := range []string{"", "x", "2(x0)", "2(x", "-1", "2,,3"} {
		if _, err := ParseRunLength(bad); err == nil {
			t.Errorf("ParseRunLength(%q): no error", bad)
		}
	}
}
