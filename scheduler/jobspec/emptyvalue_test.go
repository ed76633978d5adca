package jobspec

import (
	"testing"
)

// An option given an empty value is unset, as Slurm 22.05 treats it. On the
// anchor (4 nodes n[1-4], partition gpu), `sbatch --hold --parsable
// --constraint= j.sh` (and each option below) printed a job id, rc=0, and
// scontrol showed the field unset (Features=, ExcNodeList=, ReqNodeList=,
// Reservation absent, QOS=(null), Account=, Dependency=(null)). An empty
// command-line value also clears what a directive set.
func TestEmptyValueUnsets(t *testing.T) {
	script := `#!/bin/bash
#SBATCH --constraint=a100 --exclude=n1 --nodelist=n2 --reservation=r1
#SBATCH --qos=high --account=proj --dependency=afterok:7
hostname
`
	cases := []struct {
		arg   string
		field string
		unset func(*Request) bool
	}{
		{"--constraint=", "constraint", func(r *Request) bool { return r.Constraint == nil }},
		{"--exclude=", "exclude", func(r *Request) bool { return r.Exclude == nil }},
		{"--nodelist=", "nodeList", func(r *Request) bool { return r.NodeList == nil }},
		{"--reservation=", "reservations", func(r *Request) bool { return r.Reservations == nil }},
		{"--qos=", "qos", func(r *Request) bool { return r.QOS == nil }},
		{"--account=", "account", func(r *Request) bool { return r.Account == "" }},
		{"--dependency=", "dependency", func(r *Request) bool { return r.Dependency == nil }},
		{"-x ", "exclude", func(r *Request) bool { return r.Exclude == nil }},
	}
	for _, tc := range cases {
		t.Run(tc.arg, func(t *testing.T) {
			for _, withScript := range []bool{false, true} {
				args := []string{tc.arg, "run.sh"}
				if tc.arg == "-x " {
					args = []string{"-x", "", "run.sh"}
				}
				s := "#!/bin/bash\nhostname\n"
				if withScript {
					s = script
				}
				req, err := Parse([]byte(s), args, nil, testOpts())
				if err != nil {
					t.Fatalf("Parse(%q, script directives %v): %v; Slurm accepts it as unset", args, withScript, err)
				}
				if !tc.unset(req) {
					t.Fatalf("Parse(%q, script directives %v): %s still set", args, withScript, tc.field)
				}
				if src, ok := req.Sources[tc.field]; ok {
					t.Fatalf("Parse(%q): %s has source %q; an unset option has none", args, tc.field, src)
				}
			}
		})
	}
}
