package jobspec

import (
	"errors"
	"strings"
	"testing"
)

// On the Slurm 22.05 anchor, a directive ending in an option that needs a
// value took the next directive's first word: "#SBATCH -A" then "#SBATCH
// --cpus-per-gpu=16 # why" printed Account=--cpus-per-gpu=16; "#SBATCH -J"
// then "#SBATCH foo bar" was refused on bar, and "#SBATCH --job-name" then
// "#SBATCH -t 5" on 5 ("Invalid directive found in batch script").
func TestDirectiveValueFromNextDirective(t *testing.T) {
	req := mustParse(t, "#!/bin/bash\n#SBATCH -A \n# a comment\n#SBATCH --cpus-per-gpu=16 # why\nhostname\n", nil, nil, testOpts())
	if req.Account != "--cpus-per-gpu=16" || req.Sources["account"] != "#SBATCH line 2" || req.CPUsPerGPU != 0 {
		t.Errorf("account %q from %q, cpus-per-gpu %d; want --cpus-per-gpu=16 from line 2 and no --cpus-per-gpu",
			req.Account, req.Sources["account"], req.CPUsPerGPU)
	}
	req = mustParse(t, "#!/bin/bash\n#SBATCH -J\n#SBATCH train -N 2\n", nil, nil, testOpts())
	if req.Name != "train" || req.Nodes.Min != 2 {
		t.Errorf("name %q nodes %+v; want train and 2", req.Name, req.Nodes)
	}
	for _, tc := range []struct{ script, word string }{
		{"#!/bin/bash\n#SBATCH -J\n#SBATCH foo bar\n", "bar"},
		{"#!/bin/bash\n#SBATCH --job-name\n#SBATCH -t 5\n", "5"},
	} {
		_, err := Parse([]byte(tc.script), nil, nil, testOpts())
		var de *DirectiveError
		if !errors.As(err, &de) || de.Option != tc.word || !strings.Contains(err.Error(), "Invalid directive") {
			t.Errorf("%q: error %v; want an invalid directive on %q", tc.script, err, tc.word)
		}
	}
	// The last directive has no next one to take from.
	if _, err := Parse([]byte("#!/bin/bash\n#SBATCH -t 5\n#SBATCH -J\n"), nil, nil, testOpts()); err == nil || !strings.Contains(err.Error(), "requires a value") {
		t.Errorf("an option ending the last directive: %v; want requires a value", err)
	}
}

// Only --dependency's last value is checked, as sbatch passes it on
// unparsed (anchor: "#SBATCH -d bogus" with --dependency= or
// --dependency=singleton on the command line was taken, alone it was
// refused with "Job dependency problem").
func TestDependencyCheckedLast(t *testing.T) {
	req := mustParse(t, "#!/bin/bash\n#SBATCH -d    \n#SBATCH --dependency=after:1\n", []string{"--dependency="}, nil, testOpts())
	if req.Dependency != nil {
		t.Errorf("emptied on the command line: dependency %+v", req.Dependency)
	}
	req = mustParse(t, "#!/bin/bash\n#SBATCH -d bogus\n", []string{"--dependency=singleton"}, nil, testOpts())
	if req.Sources["dependency"] != SourceCLI || req.Dependency == nil || len(req.Dependency.Conditions) != 1 {
		t.Errorf("replaced on the command line: dependency %+v from %q", req.Dependency, req.Sources["dependency"])
	}
	_, err := Parse([]byte("#!/bin/bash\n#SBATCH -d bogus\n"), nil, nil, testOpts())
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "--dependency" || oe.Value != "bogus" || oe.Source != "#SBATCH line 2" {
		t.Errorf("a bad last value: %v; want an error on --dependency=bogus from line 2", err)
	}
}
