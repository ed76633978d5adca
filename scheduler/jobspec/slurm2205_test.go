package jobspec

import (
	"io/fs"
	"slices"
	"testing"
)

// --mail-type accumulates. On the Slurm 22.05 anchor, a script with
// `#SBATCH --mail-type=ALL` submitted with --mail-type=END showed
// MailType=INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT (ALL), and one
// with `#SBATCH --mail-type BEGIN,END` submitted with --mail-type=NONE
// showed MailType=BEGIN,END: sbatch ORs every --mail-type into one set
// (compat corpus cases g0904 and g1904).
func TestMailTypeAccumulates(t *testing.T) {
	cases := []struct {
		directive, arg string
		want           []string
	}{
		{"ALL", "END", []string{"ALL", "END"}},
		{"BEGIN,END", "NONE", []string{"BEGIN", "END", "NONE"}},
		{"END", "END", []string{"END"}},
	}
	for _, tc := range cases {
		script := "#!/bin/bash\n#SBATCH --mail-type=" + tc.directive + "\nhostname\n"
		req, err := Parse([]byte(script), []string{"--mail-type=" + tc.arg, "run.sh"}, nil, testOpts())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(req.MailType, tc.want) {
			t.Errorf("directive %s, command line %s: mail types %v, want %v", tc.directive, tc.arg, req.MailType, tc.want)
		}
	}
}

// A relative --chdir is joined to the submit directory as written: on
// the anchor, `sbatch -D . j.sh` in /tmp/cw showed WorkDir=/tmp/cw/. and
// StdOut=/tmp/cw/./slurm-<id>.out.
func TestChdirJoinedAsWritten(t *testing.T) {
	opts := testOpts()
	for _, tc := range []struct{ arg, want string }{{".", opts.SubmitDir + "/."}, {"sub/", opts.SubmitDir + "/sub/"}, {"/tmp", "/tmp"}} {
		req, err := Parse([]byte("#!/bin/bash\nhostname\n"), []string{"-D", tc.arg, "run.sh"}, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		if req.WorkDir != tc.want {
			t.Errorf("-D %s: WorkDir %q, want %q", tc.arg, req.WorkDir, tc.want)
		}
	}
}

// What sbatch 22.05 takes that Parity refused: on the anchor, each of
// these submitted held with rc 0 (-N 0 showed NumNodes=0; the GPU-less
// --ntasks-per-gpu ones NtasksPerTRES=1).
func TestAcceptedAsSlurm2205Does(t *testing.T) {
	for _, args := range [][]string{
		{"-N", "0"},
		{"--exclusive", "-s"},
		{"--ntasks-per-gpu=1", "-N", "1-2", "-G", "2"},
		{"--ntasks-per-gpu=1", "-N", "1"},
		{"--ntasks-per-gpu=1", "-n", "2"},
		{"--mem-per-gpu=1G", "--gres=gpu:1"},
	} {
		if _, err := Parse([]byte("#!/bin/bash\nhostname\n"), append(args, "run.sh"), nil, testOpts()); err != nil {
			t.Errorf("Parse(%q): %v; Slurm accepts it", args, err)
		}
	}
}

// GPU counts that contradict one another are refused before submitting,
// as sbatch 22.05 refused each of these on the anchor (its words quoted).
func TestGPUCountsAgreeAsSlurm2205Checks(t *testing.T) {
	cases := []struct {
		args  []string
		slurm string
	}{
		{[]string{"--gpus=2", "--gpus-per-node=4"}, "Failed to ensure --gpus >= --gres=gpu/--gpus-per-node >= --gpus-per-socket"},
		{[]string{"--gpus=6", "--gres=gpu:4"}, "--gpus is not multiple of --gres=gpu/--gpus-per-node"},
		{[]string{"--gpus=1", "--gpus-per-task=2", "-n", "1"}, "Failed to ensure --gpus >= --gres=gpu/--gpus-per-node >= --gpus-per-socket"},
		{[]string{"--gpus=3", "--gpus-per-task=2"}, "--gpus not multiple of --gpus-per-task"},
		{[]string{"--gpus=4", "--gpus-per-task=1", "-n", "2"}, "number of requested tasks differ from -n/--ntasks"},
		{[]string{"--gpus=33", "--gpus-per-task=1", "--ntasks-per-node=8"}, "number of requested tasks differ from -n/--ntasks"},
		{[]string{"--gpus=1", "-N", "2"}, "--gpus < -N"},
		{[]string{"--gres=gpu:3", "--gpus-per-task=2"}, "--gpus-per-task used without either --gpus or -n/--ntasks is not allowed"},
		{[]string{"--gpus-per-node=4", "--gpus-per-task=1", "--ntasks-per-node=2"}, "tasks per node differ from --ntasks-per-node"},
	}
	for _, tc := range cases {
		if _, err := Parse([]byte("#!/bin/bash\nhostname\n"), append(tc.args, "run.sh"), nil, testOpts()); err == nil {
			t.Errorf("Parse(%q) accepted; Slurm refuses it: %s", tc.args, tc.slurm)
		}
	}
	for _, ok := range [][]string{{"--gpus=8", "--gpus-per-node=4"}, {"--gpus=4", "--gpus-per-task=2", "-n", "2"},
		{"--mem-per-gpu=1G", "--ntasks-per-gpu=1", "-N", "1"}} {
		if _, err := Parse([]byte("#!/bin/bash\nhostname\n"), append(ok, "run.sh"), nil, testOpts()); err != nil {
			t.Errorf("Parse(%q): %v; Slurm accepts it", ok, err)
		}
	}
}

// Command= as sbatch records it with -D on the command line: on the
// anchor in /tmp/cw, `sbatch -D . job.sh` showed Command=/tmp/cw/./job.sh
// and `sbatch -D /tmp job.sh` (no /tmp/job.sh) Command=job.sh; without
// -D, or -D in a directive, the file read (/tmp/cw/job.sh).
func TestCommandPathWithChdir(t *testing.T) {
	opts := testOpts()
	opts.ReadScript = func(p, dir string) ([]byte, string, error) {
		return []byte("#!/bin/bash\nhostname\n"), dir + "/" + p, nil
	}
	opts.ReadFile = func(p string) ([]byte, error) {
		if p == opts.SubmitDir+"/./job.sh" {
			return nil, nil
		}
		return nil, fs.ErrNotExist
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-D", ".", "job.sh"}, opts.SubmitDir + "/./job.sh"},
		{[]string{"-D", "/tmp", "job.sh"}, "job.sh"},
		{[]string{"job.sh"}, opts.SubmitDir + "/job.sh"},
	} {
		req, err := Parse(nil, tc.args, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		if req.ScriptFile != tc.want {
			t.Errorf("%q: Command %q, want %q", tc.args, req.ScriptFile, tc.want)
		}
	}
}
