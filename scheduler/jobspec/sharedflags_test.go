package jobspec

import (
	"slices"
	"testing"
)

// What the anchor printed for each, with sbatch --hold --parsable: the
// last of --exclusive and --oversubscribe decides (OverSubscribe=NO or
// YES); --kill-on-invalid-dep given yes and no keeps both flags; the
// last value of an option decides whether it is empty (Account= for -A
// physics -A "", Account=physics the other way round).
func TestOptionsSbatchKeepsTogether(t *testing.T) {
	cases := []struct {
		name                 string
		script               string
		args                 []string
		exclusive            string
		oversubscribe        bool
		killBoth             bool
		empty, derivedCounts []string
	}{
		{name: "exclusive then oversubscribe", args: []string{"--exclusive", "--oversubscribe"}, oversubscribe: true,
			derivedCounts: []string{"nodes", "ntasks"}},
		{name: "script oversubscribe, command line exclusive", script: "#SBATCH --oversubscribe\n", args: []string{"--exclusive"},
			exclusive: ExclusiveNode, derivedCounts: []string{"nodes", "ntasks"}},
		{name: "exclusive=user stays beside oversubscribe", args: []string{"--exclusive=user", "-s"}, exclusive: ExclusiveUser,
			oversubscribe: true, derivedCounts: []string{"nodes", "ntasks"}},
		{name: "kill-on-invalid-dep yes then no", args: []string{"--kill-on-invalid-dep=yes", "--kill-on-invalid-dep=no"}, killBoth: true,
			derivedCounts: []string{"nodes", "ntasks"}},
		{name: "kill-on-invalid-dep yes twice", args: []string{"--kill-on-invalid-dep=yes", "--kill-on=yes"},
			derivedCounts: []string{"nodes", "ntasks"}},
		{name: "account emptied last", args: []string{"-A", "physics", "-A", "", "--constraint=", "-x", "", "--comment="},
			empty: []string{"account", "constraint", "exclude", "comment"}, derivedCounts: []string{"nodes", "ntasks"}},
		{name: "account given after empty", script: "#SBATCH --account=\n", args: []string{"-A", "physics"},
			derivedCounts: []string{"nodes", "ntasks"}},
		{name: "-N 0 and -n", args: []string{"-N", "0", "-n", "4"}, empty: []string{"nodes"}},
		{name: "-w derives the node count", args: []string{"-w", "n[1-2]"}, derivedCounts: []string{"nodes", "ntasks"}},
		{name: "-N 2 derives the tasks", args: []string{"-N", "2"}, derivedCounts: []string{"ntasks"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := mustParse(t, "#!/bin/bash\n"+tc.script+"hostname\n", append(tc.args, "run.sh"), nil, testOpts())
			if req.Exclusive != tc.exclusive || req.Oversubscribe != tc.oversubscribe {
				t.Errorf("exclusive %q oversubscribe %v, want %q %v", req.Exclusive, req.Oversubscribe, tc.exclusive, tc.oversubscribe)
			}
			if req.KillOnInvalidDepBoth != tc.killBoth {
				t.Errorf("KillOnInvalidDepBoth = %v, want %v", req.KillOnInvalidDepBoth, tc.killBoth)
			}
			if !slices.Equal(req.Empty, tc.empty) {
				t.Errorf("Empty = %q, want %q", req.Empty, tc.empty)
			}
			if got := req.DerivedCounts(); !slices.Equal(got, tc.derivedCounts) {
				t.Errorf("DerivedCounts = %q, want %q", got, tc.derivedCounts)
			}
		})
	}
}
