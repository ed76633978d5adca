package jobspec

import "testing"

func TestExpand(t *testing.T) {
	task := Vars{JobID: 128, ArrayJobID: 100, ArrayTaskID: 17, InArray: true, JobName: "train", User: "alice",
		NodeName: "gpu01", NodeIndex: 1, TaskID: 3, RestartCount: 2, SLUID: "s1"}
	plain := Vars{JobID: 128, JobName: "train"}
	step := Vars{JobID: 128, StepID: "2"}
	tests := []struct {
		pattern string
		v       Vars
		want    string
	}{
		{"slurm-%j.out", plain, "slurm-128.out"},
		{"slurm-%A_%a.out", task, "slurm-100_17.out"},
		{"%A_%a", plain, "128_4294967294"},
		{"%4j", plain, "0128"},
		{"%2j", plain, "128"},
		{"%12j", plain, "0000000128"},
		{"%5x", plain, "train"},
		{"%%j", plain, "%j"},
		{"100%", plain, "100%"},
		{"%q%", plain, "%q%"},
		{"%3", plain, "%3"},
		{"%N-%n-%t-%u-%x-%r-%S", task, "gpu01-1-3-alice-train-2-s1"},
		{"%3n.%3t", task, "001.003"},
		{"%b", task, "7"},
		{"%b", plain, "4"},
		{"%s", plain, "batch"},
		{"%J", plain, "128"},
		{"%J", step, "128.2"},
		{"%s", step, "2"},
		{"job\\%j.out", plain, "job%j.out"},
		{"/abs\\path/%x", plain, "/abspath/%x"},
		{"", plain, ""},
	}
	for _, tt := range tests {
		if got := Expand(tt.pattern, tt.v); got != tt.want {
			t.Errorf("Expand(%q) = %q; want %q", tt.pattern, got, tt.want)
		}
	}
}

func TestPatternPerNode(t *testing.T) {
	for p, want := range map[string]bool{"out-%N.log": true, "%5t": true, "%n": true, "%j.out": false, "%%N": false, "\\%N": false} {
		if got := PatternPerNode(p); got != want {
			t.Errorf("PatternPerNode(%q) = %v; want %v", p, got, want)
		}
	}
}
