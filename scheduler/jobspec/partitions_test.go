package jobspec

import (
	"slices"
	"testing"
)

// -p, #SBATCH -p and SBATCH_PARTITION each take a comma list of
// partitions, kept in the order given; the command line beats the
// environment, which beats the directives.
func TestPartitionList(t *testing.T) {
	const script = "#!/bin/sh\n#SBATCH -p dir1,dir2\nsrun x\n"
	tests := []struct {
		name   string
		script string
		args   []string
		env    map[string]string
		want   []string
	}{
		{"none", "", []string{"--wrap", "x"}, nil, nil},
		{"one on the command line", "", []string{"-p", "gpu", "--wrap", "x"}, nil, []string{"gpu"}},
		{"a list on the command line", "", []string{"-p", "gpu,debug", "--wrap", "x"}, nil, []string{"gpu", "debug"}},
		{"long option, order kept", "", []string{"--partition=debug,gpu,cpu", "--wrap", "x"}, nil, []string{"debug", "gpu", "cpu"}},
		{"a directive", script, nil, nil, []string{"dir1", "dir2"}},
		{"SBATCH_PARTITION", "", []string{"--wrap", "x"}, map[string]string{"SBATCH_PARTITION": "env1,env2"}, []string{"env1", "env2"}},
		{"SBATCH_PARTITION beats the directive", script, nil, map[string]string{"SBATCH_PARTITION": "env1"}, []string{"env1"}},
		{"the command line beats both", script, []string{"-p", "cli1,cli2"}, map[string]string{"SBATCH_PARTITION": "env1"}, []string{"cli1", "cli2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := mustParse(t, tc.script, tc.args, tc.env, testOpts())
			if !slices.Equal(req.Partitions, tc.want) {
				t.Fatalf("partitions %q, want %q", req.Partitions, tc.want)
			}
		})
	}
}
