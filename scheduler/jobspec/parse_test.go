package jobspec

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func testOpts() ParseOptions {
	return ParseOptions{Now: tuesday, Location: time.UTC, User: "alice", SubmitHost: "login1", SubmitDir: "/home/alice"}
}

func mustParse(t *testing.T, script string, args []string, env map[string]string, opts ParseOptions) *Request {
	t.Helper()
	var s []byte
	if script != "" {
		s = []byte(script)
	}
	req, err := Parse(s, args, env, opts)
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	return req
}

// A script with directives, SBATCH_* overrides and command-line overrides
// resolves field by field as Slurm would, and says where each value came from.
func TestPrecedence(t *testing.T) {
	script := `#!/bin/bash
#SBATCH --job-name=dir-name
#SBATCH -p dirpart -A diracct
#SBATCH --time=01:00:00 --mem-per-cpu=2G
#SBATCH --output=dir.out
#SBATCH --gres=gpu:2
#SBATCH -c 4
#SBATCH --qos=low
srun hostname
`
	env := map[string]string{
		"SBATCH_JOB_NAME":     "env-name",
		"SBATCH_TIMELIMIT":    "30",
		"SBATCH_MEM_PER_NODE": "16G",
		"SBATCH_ACCOUNT":      "envacct",
		"SBATCH_EXCLUSIVE":    "",
		"SBATCH_WAIT":         "0",
		"SBATCH_NO_REQUEUE":   "1",
		"SBATCH_UNKNOWN":      "ignored",
		"HOME":                "/home/alice",
	}
	args := []string{"-J", "cli-name", "-t", "2:00:00", "--qos=high", "run.sh", "arg1", "--not-an-sbatch-option"}
	req := mustParse(t, script, args, env, testOpts())

	checks := []struct {
		field, source string
		ok            bool
	}{
		{"name", SourceCLI, req.Name == "cli-name"},
		{"partitions", "#SBATCH line 3", slices.Equal(req.Partitions, []string{"dirpart"})},
		{"account", "SBATCH_ACCOUNT", req.Account == "envacct"},
		{"timeLimit", SourceCLI, req.TimeLimit == Duration(2*time.Hour)},
		// Another memory kind from SBATCH_* loses to the script's (anchor:
		// MinMemoryCPU=2G with SBATCH_MEM_PER_NODE=16G).
		{"mem", "#SBATCH line 4", req.Mem == Memory{Per: MemPerCPU, MB: 2048}},
		{"output", "#SBATCH line 5", req.Output == "dir.out"},
		{"error", "derived from --output", req.Error == "dir.out"},
		{"gres", "#SBATCH line 6", req.GRES.PerNode.Count("gpu") == 2},
		{"cpusPerTask", "#SBATCH line 7", req.CPUsPerTask == 4},
		{"qos", SourceCLI, slices.Equal(req.QOS, []string{"high"})},
		{"exclusive", "SBATCH_EXCLUSIVE", req.Exclusive == ExclusiveNode},
		{"requeue", "SBATCH_NO_REQUEUE", !req.Requeue},
		{"ntasks", SourceDefault, req.NTasks == 1},
		{"workDir", SourceDefault, req.WorkDir == "/home/alice"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("field %s has the wrong value", c.field)
		}
		if got := req.Sources[c.field]; got != c.source {
			t.Errorf("Sources[%s] = %q; want %q", c.field, got, c.source)
		}
	}
	if req.Wait {
		t.Errorf("SBATCH_WAIT=0 must leave --wait off")
	}
	if _, ok := req.Sources["wait"]; ok {
		t.Errorf("an ignored SBATCH_WAIT must not be recorded as a source")
	}
	if req.ScriptPath != "run.sh" || !slices.Equal(req.ScriptArgs, []string{"arg1", "--not-an-sbatch-option"}) {
		t.Errorf("script %q args %q", req.ScriptPath, req.ScriptArgs)
	}
	if req.Env["HOME"] != "/home/alice" || req.SubmitHost != "login1" || req.User != "alice" || !req.SubmitTime.Equal(tuesday) {
		t.Errorf("submit context not recorded: %+v", req)
	}
}

func TestMemoryExclusion(t *testing.T) {
	for _, tc := range []struct {
		script string
		args   []string
		env    map[string]string
		option string
	}{
		{"#!/bin/sh\n#SBATCH --mem=1G\n#SBATCH --mem-per-cpu=1G\n", nil, nil, "--mem-per-cpu"},
		{"#!/bin/sh\n", []string{"--mem=4G", "--mem-per-gpu=1G"}, nil, "--mem-per-gpu"},
		// The anchor refused a directive's kind beside another on the
		// command line, in either order, and two kinds from SBATCH_*.
		{"#!/bin/sh\n#SBATCH --mem=1G\n", []string{"--mem-per-gpu=8G", "--gpus=1"}, nil, "--mem-per-gpu"},
		{"#!/bin/sh\n#SBATCH --mem-per-gpu=8000\n", []string{"--mem=4G", "--gpus=1"}, nil, "--mem-per-gpu"},
		{"#!/bin/sh\n", nil, map[string]string{"SBATCH_MEM_PER_NODE": "1G", "SBATCH_MEM_PER_CPU": "2G"}, "--mem-per-cpu"},
	} {
		_, err := Parse([]byte(tc.script), tc.args, tc.env, testOpts())
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != tc.option || !strings.Contains(err.Error(), "mutually exclusive") {
			t.Errorf("%q %q: error %v; want mutually exclusive on %s", tc.script, tc.args, err, tc.option)
		}
	}
	// A kind from the script or the command line wins over SBATCH_*'s,
	// whatever the order they are read in (anchor: SBATCH_MEM_PER_GPU=1G
	// with "#SBATCH --mem=0" and no GPU was taken, MinMemoryNode=0).
	for _, tc := range []struct {
		script string
		args   []string
		env    map[string]string
		want   Memory
		source string
	}{
		{"#!/bin/sh\n#SBATCH --mem=0\n", nil, map[string]string{"SBATCH_MEM_PER_GPU": "1G"}, Memory{Per: MemPerNode}, "#SBATCH line 2"},
		{"#!/bin/sh\n#SBATCH --mem-per-cpu=2G\n", nil, map[string]string{"SBATCH_MEM_PER_GPU": "1G"}, Memory{Per: MemPerCPU, MB: 2048}, "#SBATCH line 2"},
		{"#!/bin/sh\n", []string{"--mem=1G"}, map[string]string{"SBATCH_MEM_PER_CPU": "2G"}, Memory{Per: MemPerNode, MB: 1024}, SourceCLI},
		{"#!/bin/sh\n#SBATCH --mem=1G\n", nil, map[string]string{"SBATCH_MEM_PER_NODE": "2G"}, Memory{Per: MemPerNode, MB: 2048}, "SBATCH_MEM_PER_NODE"},
	} {
		req := mustParse(t, tc.script, tc.args, tc.env, testOpts())
		if req.Mem != tc.want || req.Sources["mem"] != tc.source {
			t.Errorf("%q %q %v: memory %+v from %q, want %+v from %q", tc.script, tc.args, tc.env, req.Mem, req.Sources["mem"], tc.want, tc.source)
		}
	}
	req := mustParse(t, "#!/bin/sh\n", []string{"--mem=0"}, nil, testOpts())
	if !req.Mem.AllOfNode() {
		t.Errorf("--mem=0 must mean all memory: %+v", req.Mem)
	}
}

func TestWrapStdinAndScriptFile(t *testing.T) {
	req := mustParse(t, "", []string{"--wrap", "hostname; sleep 1", "-N1"}, nil, testOpts())
	if string(req.Script) != "#!/bin/sh\nhostname; sleep 1\n" || req.Name != "wrap" || req.Wrap != "hostname; sleep 1" || req.Sources["name"] != SourceDefault {
		t.Errorf("--wrap: script %q name %q", req.Script, req.Name)
	}
	if _, err := Parse(nil, []string{"--wrap=true", "job.sh"}, nil, testOpts()); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "--wrap") {
		t.Errorf("--wrap with a script must fail: %v", err)
	}

	opts := testOpts()
	opts.ReadStdin = func() ([]byte, error) { return []byte("#!/bin/sh\n#SBATCH -J fromstdin\necho\n"), nil }
	req = mustParse(t, "", nil, nil, opts)
	if req.Name != "fromstdin" || req.Sources["name"] != "#SBATCH line 2" {
		t.Errorf("stdin script: name %q", req.Name)
	}
	opts.ReadStdin = func() ([]byte, error) { return []byte("#!/bin/sh\necho\n"), nil }
	if req = mustParse(t, "", nil, nil, opts); req.Name != "sbatch" {
		t.Errorf("stdin default name = %q; want sbatch", req.Name)
	}

	var gotPath, gotDir string
	opts.ReadScript = func(p, dir string) ([]byte, string, error) {
		gotPath, gotDir = p, dir
		return []byte("#!/bin/bash\n#SBATCH -n 3\nsrun true\n"), dir + "/" + p, nil
	}
	req = mustParse(t, "", []string{"-D", "sub", "jobs/train.sh", "x"}, nil, opts)
	// The script is read from the submit directory, -D or not, as sbatch
	// reads it (the anchor: `sbatch -D /tmp b.sh` in /tmp/cw).
	if gotPath != "jobs/train.sh" || gotDir != "/home/alice" || req.Name != "train.sh" || req.NTasks != 3 ||
		req.WorkDir != "/home/alice/sub" || !slices.Equal(req.ScriptArgs, []string{"x"}) || req.ScriptFile != "/home/alice/jobs/train.sh" {
		t.Errorf("script file: path %q dir %q name %q ntasks %d workdir %q file %q", gotPath, gotDir, req.Name, req.NTasks, req.WorkDir, req.ScriptFile)
	}
	if _, err := Parse(nil, []string{"job.sh"}, nil, testOpts()); err == nil {
		t.Errorf("reading a script without ReadScript must fail")
	}
	if _, err := Parse(nil, nil, nil, testOpts()); err == nil {
		t.Errorf("reading stdin without ReadStdin must fail")
	}
}

func TestDefaults(t *testing.T) {
	req := mustParse(t, "#!/bin/sh\necho\n", []string{"dir/job.sh"}, nil, testOpts())
	if req.Name != "job.sh" || req.Output != "slurm-%j.out" || req.Error != "slurm-%j.out" || req.Input != "/dev/null" ||
		req.NTasks != 1 || req.CPUsPerTask != 1 || req.OpenMode != OpenTruncate || !req.Requeue || req.Export.Mode != ExportAll ||
		!req.Nodes.IsZero() || req.TimeLimit != 0 || !req.Mem.IsZero() {
		t.Errorf("defaults: %+v", req)
	}
	for _, f := range []string{"name", "output", "input", "ntasks", "cpusPerTask", "openMode", "requeue", "export"} {
		if req.Explicit(f) {
			t.Errorf("%s must not count as explicit (source %q)", f, req.Sources[f])
		}
	}
	req = mustParse(t, "#!/bin/sh\n#SBATCH --array=0-3\n", nil, nil, ParseOptions{AppendOutput: true, NoRequeue: true})
	if req.Output != "slurm-%A_%a.out" || req.OpenMode != OpenAppend || req.Requeue || req.Name != "sbatch" {
		t.Errorf("array/cluster defaults: output %q mode %q requeue %v", req.Output, req.OpenMode, req.Requeue)
	}
}

func TestDerivedCounts(t *testing.T) {
	req := mustParse(t, "#!/bin/sh\n", []string{"-N", "2", "--ntasks-per-node=4"}, nil, testOpts())
	if req.NTasks != 8 || req.Sources["ntasks"] != "derived from --ntasks-per-node" {
		t.Errorf("ntasks = %d (%s); want 8 derived", req.NTasks, req.Sources["ntasks"])
	}
	req = mustParse(t, "#!/bin/sh\n", []string{"--gpus=4", "--ntasks-per-gpu=2"}, nil, testOpts())
	if req.NTasks != 8 || req.Sources["ntasks"] != "derived from --ntasks-per-gpu" {
		t.Errorf("ntasks = %d (%s); want 8 from --ntasks-per-gpu", req.NTasks, req.Sources["ntasks"])
	}
	req = mustParse(t, "#!/bin/sh\n", []string{"-n", "1", "-N", "2"}, nil, testOpts())
	if req.Nodes != (NodeRange{1, 2}) || len(req.Warnings) != 1 {
		t.Errorf("-n 1 -N 2: nodes %v warnings %v", req.Nodes, req.Warnings)
	}
	req = mustParse(t, "#!/bin/sh\n", []string{"-w", "n3,n1,n1,n2", "-x", "n[7-8]"}, nil, testOpts())
	if !slices.Equal(req.NodeList, []string{"n1", "n2", "n3"}) || req.Nodes != (NodeRange{3, 3}) || req.Sources["nodes"] != "derived from --nodelist" ||
		!slices.Equal(req.Exclude, []string{"n7", "n8"}) {
		t.Errorf("-w: list %v nodes %v", req.NodeList, req.Nodes)
	}
	req = mustParse(t, "#!/bin/sh\n", []string{"-N", "2-6", "-w", "n[1-3]"}, nil, testOpts())
	if req.Nodes != (NodeRange{3, 6}) {
		t.Errorf("-N 2-6 -w n[1-3]: nodes %v; want 3-6", req.Nodes)
	}
	opts := testOpts()
	opts.ReadFile = func(p string) ([]byte, error) {
		if p != "/etc/hosts.txt" {
			t.Errorf("ReadFile(%q)", p)
		}
		return []byte("gpu[01-02]\ngpu04\n"), nil
	}
	req = mustParse(t, "#!/bin/sh\n", []string{"-w", "/etc/hosts.txt"}, nil, opts)
	if !slices.Equal(req.NodeList, []string{"gpu01", "gpu02", "gpu04"}) {
		t.Errorf("-w file: %v", req.NodeList)
	}
}

func TestGetoptForms(t *testing.T) {
	req := mustParse(t, "#!/bin/sh\n", []string{"--part=gpu", "-HQ", "-vvv", "-Jname", "-c2", "--nice", "--exclusive=USER",
		"--requeue=expedite", "--signal", "B:USR1@90", "--", "-script-name"}, nil, testOpts())
	if !slices.Equal(req.Partitions, []string{"gpu"}) || !req.Hold || !req.Quiet || req.Verbose != 3 || req.Name != "name" ||
		req.CPUsPerTask != 2 || req.Nice != 100 || req.Exclusive != ExclusiveUser || !req.RequeueExpedite ||
		req.Signal == nil || req.Signal.String() != "B:USR1@90" || req.ScriptPath != "-script-name" {
		t.Errorf("getopt forms: %+v", req)
	}
	script := "#!/bin/sh\n#SBATCH --time 10 --nice=-5 --begin=now+1hour --deadline=2026-03-12\n#SBATCH --dependency=afterok:1:2 --array=1-9:2%2\n" +
		"#SBATCH --constraint='h100&[r1|r2]' --switches=2@5:00 --mail-type=end,fail --open-mode=a --export=ALL,X=1\n"
	req = mustParse(t, script, nil, nil, testOpts())
	if req.TimeLimit != Duration(10*time.Minute) || req.Nice != -5 || !req.Begin.Equal(tuesday.Add(time.Hour)) ||
		!req.Deadline.Equal(at(2026, 3, 12, 0, 0, 0)) || req.Dependency.String() != "afterok:1:2" || req.Array.String() != "1-9:2%2" ||
		req.Constraint.String() != "h100&[r1|r2]" || req.Switches != 2 || req.SwitchWait != Duration(5*time.Minute) ||
		!slices.Equal(req.MailType, []string{"END", "FAIL"}) || req.OpenMode != OpenAppend || req.Export.String() != "ALL,X=1" {
		t.Errorf("directive values: %+v", req)
	}
	req = mustParse(t, "#!/bin/sh\n", nil, map[string]string{"SBATCH_DEBUG": "2", "SBATCH_REQ_SWITCH": "3", "SBATCH_WAIT4SWITCH": "1:00",
		"SBATCH_WAIT": "yes", "SBATCH_REQUEUE": "1", "SBATCH_GET_USER_ENV": "10L"}, testOpts())
	if req.Verbose != 2 || req.Switches != 3 || req.SwitchWait != Duration(time.Minute) || !req.Wait || !req.Requeue || !req.GetUserEnv || req.GetUserEnvArg != "10L" {
		t.Errorf("SBATCH_* values: %+v", req)
	}
	req = mustParse(t, "#!/bin/sh\n#SBATCH --wckey=matlab --hint=nomultithread\n", nil, nil, testOpts())
	if req.Extra["wckey"] != "matlab" || req.Extra["hint"] != "nomultithread" || len(req.Warnings) != 2 {
		t.Errorf("accepted-but-not-enforced options: %v %v", req.Extra, req.Warnings)
	}
	req = mustParse(t, "#!/bin/sh\n#SLURM -N 1\n", nil, nil, testOpts())
	if req.Nodes != (NodeRange{1, 1}) || req.Sources["nodes"] != "#SLURM line 2" || len(req.Warnings) != 1 {
		t.Errorf("legacy directive: %v %v", req.Nodes, req.Warnings)
	}
}
