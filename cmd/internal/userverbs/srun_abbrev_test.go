package userverbs

import (
	"slices"
	"strings"
	"testing"
)

// srun's own long options abbreviate as getopt_long allows. On the Slurm
// 22.05 anchor, `srun --lab -N1 true`, `--unbuf`, `--exa`, `--pt` and
// `--tasks=1` ran (rc 0), and `--ove` was refused: "option '--ove' is
// ambiguous; possibilities: '--overcommit' '--overlap' '--oversubscribe'".
func TestParseSrunArgsAbbreviations(t *testing.T) {
	cases := []struct {
		verb        string
		in          []string
		check       func(srunArgs) bool
		errContains string
	}{
		{verb: "srun", in: []string{"--lab", "hostname"}, check: func(a srunArgs) bool { return a.label }},
		{verb: "srun", in: []string{"--unbuf", "hostname"}, check: func(a srunArgs) bool { return slices.Equal(a.argv, []string{"hostname"}) && len(a.opts) == 0 }},
		{verb: "srun", in: []string{"--exa", "hostname"}, check: func(a srunArgs) bool { return a.exact }},
		{verb: "srun", in: []string{"--pt", "bash"}, check: func(a srunArgs) bool { return a.pty }},
		{verb: "srun", in: []string{"--jobi=7", "true"}, check: func(a srunArgs) bool { return a.jobID == 7 }},
		{verb: "srun", in: []string{"--tasks=1", "true"}, check: func(a srunArgs) bool { return slices.Equal(a.opts, []string{"--tasks=1"}) }},
		{verb: "salloc", in: []string{"--kill-c=TERM", "sh"}, check: func(a srunArgs) bool { return a.killCommand && a.killSignal == 15 }},
		{verb: "srun", in: []string{"--ove", "true"}, errContains: "option '--ove' is ambiguous; possibilities: '--overcommit' '--overlap' '--oversubscribe'"},
	}
	for _, tc := range cases {
		a, err := parseSrunArgs(tc.verb, tc.in)
		if tc.errContains != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errContains) {
				t.Errorf("%s %q: error %v, want %q", tc.verb, tc.in, err, tc.errContains)
			}
			continue
		}
		if err != nil || !tc.check(a) {
			t.Errorf("%s %q: %+v, %v; want the abbreviated option read", tc.verb, tc.in, a, err)
		}
	}
}
