package jobspec

import (
	"slices"
	"strings"
	"testing"
)

// Long options abbreviate to any unambiguous prefix, getopt_long's rule,
// with an option's aliases counted as that option. Each case is what
// `sbatch --hold --parsable <arg> j.sh` answered on the Slurm 22.05 anchor
// (partition gpu, n[1-4]): accepted (a job id, rc 0; scontrol's field in
// the comment) or refused as ambiguous (rc 255, "option '--cpus=2' is
// ambiguous; possibilities: '--cpus-per-gpu' '--cpus-per-task'").
func TestLongOptionAbbreviations(t *testing.T) {
	cases := []struct {
		args      []string
		ambiguous string // "" when Slurm accepted it
		check     func(*Request) bool
	}{
		// -N2 --tasks=2: NumNodes=2-2 NumTasks=4 (--tasks-per-node).
		{[]string{"-N2", "--tasks=2"}, "", func(r *Request) bool { return r.NTasksPerNode == 2 }},
		{[]string{"--tasks-per-node=2"}, "", func(r *Request) bool { return r.NTasksPerNode == 2 }},
		{[]string{"--tasks-per=2"}, "", func(r *Request) bool { return r.NTasksPerNode == 2 }},
		{[]string{"--ntasks-per-n=2"}, "", func(r *Request) bool { return r.NTasksPerNode == 2 }},
		{[]string{"--cpus-per-t=2"}, "", func(r *Request) bool { return r.CPUsPerTask == 2 }},
		{[]string{"--dep=afterok:1"}, "", func(r *Request) bool { return r.Dependency != nil }},
		{[]string{"--hol"}, "", func(r *Request) bool { return r.Hold }},
		{[]string{"--job=x"}, "", func(r *Request) bool { return r.Name == "x" }},
		{[]string{"--pars"}, "", func(r *Request) bool { return r.Parsable }},
		{[]string{"--mem-per-c=1"}, "", func(r *Request) bool { return r.Mem.Per == MemPerCPU }},
		{[]string{"--threads=1"}, "", func(r *Request) bool { return r.Extra["threads-per-core"] == "1" }},
		{[]string{"--export-f=/dev/null"}, "", func(r *Request) bool { return r.Extra["export-file"] == "/dev/null" }},
		// --cluster is an alias of --clusters (not a prefix of it and
		// --cluster-constraint): the anchor answered as for --clusters.
		{[]string{"--cluster=c1"}, "", func(r *Request) bool { return slices.Equal(r.Clusters, []string{"c1"}) }},
		{[]string{"--cpus=2"}, "--cpus-per-task, --cpus-per-gpu", nil},
		{[]string{"--par=gpu"}, "--partition, --parsable", nil},
		{[]string{"--exc=n1"}, "--exclusive, --exclude", nil},
		{[]string{"--exp=ALL"}, "--export, --export-file", nil},
		{[]string{"--gpus-per=1"}, "--gpus-per-node, --gpus-per-task, --gpus-per-socket", nil},
	}
	for _, tc := range cases {
		name := strings.Join(tc.args, " ")
		t.Run(name, func(t *testing.T) {
			req, err := Parse([]byte("#!/bin/bash\nhostname\n"), append(tc.args, "run.sh"), nil, testOpts())
			if tc.ambiguous != "" {
				if err == nil || !strings.Contains(err.Error(), "ambiguous option (could be "+tc.ambiguous+")") {
					t.Fatalf("Parse(%s) = %v; Slurm refuses it as ambiguous between %s", name, err, tc.ambiguous)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%s): %v; Slurm accepts it", name, err)
			}
			if !tc.check(req) {
				t.Fatalf("Parse(%s) did not set the option it abbreviates: %+v", name, req)
			}
		})
	}
}

// srun and salloc find where the command begins with the same table, so
// an abbreviated option's value is not taken for the command.
func TestArgWordsAbbreviations(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--tasks", "2", "cmd"}, 2},
		{[]string{"--cluster", "c1", "cmd"}, 2},
		{[]string{"--pars", "cmd"}, 1},
	} {
		if got := ArgWords(tc.args); got != tc.want {
			t.Errorf("ArgWords(%q) = %d, want %d", tc.args, got, tc.want)
		}
	}
}
