package jobspec

import "testing"

// A warning is printed once however many sources give its option: the
// lean client printed "--hint is accepted but not enforced by Parity" four
// times for a script with two --hint lines, SBATCH_HINT and --hint.
func TestWarningOnce(t *testing.T) {
	script := "#!/bin/bash\n#SBATCH --hint=nomultithread\n#SBATCH --hint=compute_bound --wckey=a\nhostname\n"
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want int
	}{
		{[]string{"--hint=multithread", "run.sh"}, map[string]string{"SBATCH_HINT": "x"}, 2},
		{[]string{"--wckey=b", "--wckey=c", "run.sh"}, nil, 2},
	} {
		req, err := Parse([]byte(script), tc.args, tc.env, testOpts())
		if err != nil {
			t.Fatal(err)
		}
		if len(req.Warnings) != tc.want {
			t.Errorf("Parse(%q): warnings %q, want %d (one per option)", tc.args, req.Warnings, tc.want)
		}
	}
}
