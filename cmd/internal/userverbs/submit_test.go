package userverbs

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
)

func TestSplitSubmitArgs(t *testing.T) {
	cases := []struct {
		args       []string
		rest       []string
		json, help bool
		controller string
		token, ca  string
		err        bool
	}{
		{args: []string{"-p", "gpu", "job.sh", "--json"}, rest: []string{"-p", "gpu", "job.sh", "--json"}},
		{args: []string{"--json", "-p", "gpu", "job.sh"}, rest: []string{"-p", "gpu", "job.sh"}, json: true},
		{args: []string{"-J", "--json", "job.sh"}, rest: []string{"-J", "--json", "job.sh"}}, // the job is named --json
		{args: []string{"--controller", "h:1", "--token=abc", "--parse-only", "x.sh", "--token", "script-arg"},
			rest: []string{"--parse-only", "x.sh", "--token", "script-arg"}, controller: "h:1", token: "abc"},
		{args: []string{"--wrap", "hostname", "--json"}, rest: []string{"--wrap", "hostname"}, json: true},
		{args: []string{"-N2", "--help"}, help: true},
		{args: []string{"--", "--json"}, rest: []string{"--", "--json"}},
		{args: []string{"--ca", "/etc/parity/ca.pem", "--ca=/x/ca.pem", "x.sh", "--ca", "arg"}, rest: []string{"x.sh", "--ca", "arg"}, ca: "/x/ca.pem"},
		{args: []string{"--controller"}, err: true},
		{args: []string{"--ca"}, err: true},
	}
	for _, c := range cases {
		f, rest, help, err := splitSubmitArgs(c.args)
		if (err != nil) != c.err {
			t.Errorf("splitSubmitArgs(%q) error = %v", c.args, err)
			continue
		}
		if err == nil && (!slices.Equal(rest, c.rest) || f.json != c.json || help != c.help || f.controller != c.controller || f.token != c.token || f.ca != c.ca) {
			t.Errorf("splitSubmitArgs(%q) = %q json=%v help=%v controller=%q token=%q", c.args, rest, f.json, help, f.controller, f.token)
		}
	}
}

const trainScript = `#!/bin/bash
# a real GPU training script
#SBATCH --job-name=train
#SBATCH -p debug
#SBATCH --gres=gpu:h100:4
#SBATCH --time=2:00:00
#SBATCH --mem=64G
#SBATCH -o logs/%x-%j.out

srun python train.py
#SBATCH --nodes=9
`

func writeScript(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// parseOnly runs submit --parse-only --json and decodes the request.
func parseOnly(t *testing.T, env userEnv, args ...string) map[string]any {
	t.Helper()
	out, errs, code := runCLI(env, append([]string{"sbatch", "--parse-only", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var req map[string]any
	if err := json.Unmarshal([]byte(out), &req); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return req
}

func TestSubmitParseOnlyPrecedence(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "train.sh", trainScript)
	vars := map[string]string{"SBATCH_TIMELIMIT": "30", "SBATCH_PARTITION": "gpu", "USER": "alice", "HOME": "/home/alice", "PATH": "/bin",
		"PARITY_TOKEN": "pt1.secret"}
	// No token, no controller: nothing is submitted.
	req := parseOnly(t, testEnv(dir, vars, ""), "-p", "big", "--ntasks-per-node=4", "train.sh", "--lr", "3e-4")
	want := map[string]any{
		"name": "train", "timeLimit": "00:30:00", "ntasksPerNode": 4.0, "scriptPath": "train.sh", "output": "logs/%x-%j.out",
		"workDir": dir, "user": "alice", "parseOnly": true,
	}
	for k, v := range want {
		if req[k] != v {
			t.Errorf("%s = %#v, want %#v", k, req[k], v)
		}
	}
	if p := req["partitions"].([]any); len(p) != 1 || p[0] != "big" {
		t.Errorf("partitions = %v, want the command line's [big]", p)
	}
	if args := req["scriptArgs"].([]any); len(args) != 2 || args[0] != "--lr" {
		t.Errorf("scriptArgs = %v", args)
	}
	if req["nodes"] != nil {
		t.Errorf("a directive after the first command was read: nodes = %v", req["nodes"])
	}
	src := req["sources"].(map[string]any)
	for field, from := range map[string]string{"name": "#SBATCH line 3", "timeLimit": "SBATCH_TIMELIMIT", "partitions": "command line",
		"gres": "#SBATCH line 5", "mem": "#SBATCH line 7"} {
		if src[field] != from {
			t.Errorf("sources[%s] = %v, want %q", field, src[field], from)
		}
	}
	if env := req["env"].(map[string]any); env["PARITY_TOKEN"] != "<redacted>" || env["HOME"] != "/home/alice" {
		t.Errorf("env = %v: the token must be hidden, the rest kept", env)
	}
	gres := req["gres"].(map[string]any)
	if pn := gres["perNode"].([]any); len(pn) != 1 {
		t.Errorf("gres = %v", gres)
	}
}

func TestSubmitParseOnlyTextAndStdin(t *testing.T) {
	env := testEnv(t.TempDir(), map[string]string{"USER": "bob"}, "#!/bin/sh\n#SBATCH -t 5\nhostname\n")
	out, errs, code := runCLI(env, "parity", "submit", "--parse-only")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{`name               "sbatch"`, `timeLimit          "00:05:00"  (#SBATCH line 2)`, "env                1 variables"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	req := parseOnly(t, testEnv(t.TempDir(), nil, ""), "--wrap", "nvidia-smi -L", "-G", "2")
	if req["wrap"] != "nvidia-smi -L" || req["gpuOptions"].(map[string]any)["gpus"] != "2" {
		t.Errorf("wrap request = %v", req)
	}
}

func TestSubmitBadInput(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "bad.sh", "#!/bin/bash\n#SBATCH --gpu-count=4\nhostname\n")
	writeScript(t, dir, "ok.sh", "#!/bin/bash\nhostname\n")
	writeScript(t, dir, "dos.sh", "#!/bin/bash\r\nhostname\r\n")
	cases := []struct {
		args []string
		vars map[string]string
		code int
		msg  []string
	}{
		{[]string{"bad.sh"}, nil, 1, []string{"sbatch: error: Invalid directive found in batch script: --gpu-count", "line 2"}},
		{[]string{"--time=abc", "ok.sh"}, nil, 1, []string{"sbatch: error: --time=\"abc\" (command line)"}},
		{[]string{"ok.sh"}, map[string]string{"SBATCH_TIMELIMIT": "1:2:3:4"}, 1, []string{"--time=\"1:2:3:4\" (SBATCH_TIMELIMIT)"}},
		{[]string{"--frobnicate", "ok.sh"}, nil, 1, []string{"--frobnicate", "unknown option"}},
		{[]string{"--mem=4G", "--mem-per-cpu=1G", "ok.sh"}, map[string]string{"SLURM_EXIT_ERROR": "3"}, 3, []string{"--mem"}},
		{[]string{"dos.sh"}, nil, 1, []string{"DOS line breaks"}},
		{[]string{"missing.sh"}, nil, 1, []string{"missing.sh"}},
		{[]string{"--wrap", "x", "ok.sh"}, nil, 1, []string{"--wrap"}},
	}
	for _, c := range cases {
		_, errs, code := runCLI(testEnv(dir, c.vars, ""), append([]string{"sbatch", "--parse-only"}, c.args...)...)
		if code != c.code {
			t.Errorf("%q: exit %d, want %d (%s)", c.args, code, c.code, errs)
		}
		for _, m := range c.msg {
			if !strings.Contains(errs, m) {
				t.Errorf("%q: stderr %q lacks %q", c.args, errs, m)
			}
		}
	}
}

func TestVerbsNeedAToken(t *testing.T) {
	env := testEnv(t.TempDir(), map[string]string{"XDG_CONFIG_HOME": t.TempDir()}, "")
	t.Setenv("PARITY_TOKEN", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, argv := range [][]string{{"squeue"}, {"sinfo"}, {"parity", "explain", "1"}, {"sbatch", "--wrap", "x"}} {
		_, errs, code := runCLI(env, argv...)
		if code != 1 || !strings.Contains(errs, "no token") {
			t.Errorf("%q: exit %d, stderr %q", argv, code, errs)
		}
	}
}

// TestSubmitHelperProcess is not a test: BenchmarkSubmitProcesses runs
// the test binary as a stand-in `parity` process through it when no
// binary serving `submit` is at hand.
func TestSubmitHelperProcess(t *testing.T) {
	if os.Getenv("PARITY_SUBMIT_HELPER") != "1" {
		t.Skip("helper process for BenchmarkSubmitProcesses")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	var stdout, stderr bytes.Buffer
	code := Execute(context.Background(), testRoot(realUserEnv(), &stdout, &stderr), CompatArgs(args, SlurmVerb), &stderr)
	os.Stdout.Write(stdout.Bytes())
	os.Stderr.Write(stderr.Bytes())
	os.Exit(code)
}

// submitBinary finds a program that serves `parity submit`: for
// parity-lite's run $PARITY_BIN when set (a full parity binary, to
// compare), else pkg (parity-lite or parity-sbatch) built with the Go
// toolchain, else the test binary through TestSubmitHelperProcess. It
// returns the command line prefix to run.
func submitBinary(b *testing.B, pkg string) (prefix []string, what string) {
	if bin := os.Getenv("PARITY_BIN"); bin != "" && pkg == "cmd/parity-lite" {
		return []string{bin, "submit"}, bin
	}
	if goBin, err := exec.LookPath("go"); err == nil {
		name := filepath.Base(pkg)
		bin := filepath.Join(b.TempDir(), name)
		build := exec.Command(goBin, "build", "-o", bin, "github.com/parityhpc/parity/"+pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as make build makes it
		if out, err := build.CombinedOutput(); err == nil {
			if exec.Command(bin, "submit", "--help").Run() == nil {
				return []string{bin, "submit"}, name + " built from " + pkg
			}
		} else {
			b.Logf("go build: %v\n%s", err, out)
		}
	}
	return []string{os.Args[0], "-test.run=^TestSubmitHelperProcess$", "--", "sbatch"}, "the test binary"
}

// BenchmarkSubmitProcesses measures `parity submit` as one process per
// job, sequentially, against a running controller (committing each job
// to disk before it answers): what batch pipelines that call sbatch in a
// loop see. Slurm 22.05's sbatch manages about 49 a second; the target is
// ten times that. parity-lite submits over gRPC, parity-sbatch (what
// install-compat links sbatch to) as JSON over HTTP. Besides submits/s it
// reports each process's CPU time (user+system, cpu-ms/op). Run it with
// -benchtime=500x for the figure.
func BenchmarkSubmitProcesses(b *testing.B) {
	for _, pkg := range []string{"cmd/parity-lite", "cmd/parity-sbatch"} {
		b.Run(filepath.Base(pkg), func(b *testing.B) { benchSubmitProcesses(b, pkg) })
	}
}

func benchSubmitProcesses(b *testing.B, pkg string) {
	cl := startCLICluster(b)
	prefix, what := submitBinary(b, pkg)
	b.Logf("submitting with %s", what)
	env := append(os.Environ(), "PARITY_SUBMIT_HELPER=1", "PARITY_CONTROLLER="+cl.c.Addr(),
		"PARITY_TOKEN="+cl.token("alice", auth.RoleUser, ""))
	args := append(prefix, "--parsable", "--wrap", "hostname")
	var cpu time.Duration
	b.ResetTimer()
	for i := range b.N {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != strconv.Itoa(i+1) {
			b.Fatalf("submit %d: %v: %s", i+1, err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "submits/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkSubmitInProcess is the same submission without the process:
// option parsing, dialling and the controller's durable commit.
func BenchmarkSubmitInProcess(b *testing.B) {
	cl := startCLICluster(b)
	env := cl.as("alice", nil)
	b.ResetTimer()
	for i := range b.N {
		out, errs, code := runCLI(env, "sbatch", "--parsable", "--wrap", "hostname")
		if code != 0 || strings.TrimSpace(out) != strconv.Itoa(i+1) {
			b.Fatalf("submit %d: %s", i+1, errs)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "submits/s")
}
