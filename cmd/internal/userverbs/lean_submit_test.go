package userverbs

import (
	"bytes"
	"context"
	"maps"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parityhpc/parity/cmd/internal/sbatch"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// runLean runs argv (argv[0] is the program, "sbatch") through the lean
// sbatch (cmd/parity-sbatch's whole program: JSON over HTTP, no gRPC) and
// returns stdout, stderr and the exit status. --wait is not expected.
func runLean(t *testing.T, env userEnv, argv ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	noWait := func(context.Context, []string, *jobspec.Request) int {
		t.Errorf("%q was handed off", argv)
		return 99
	}
	senv := env.sbatch()
	if filepath.Base(argv[0]) == "sbatch" {
		senv.Voice = sbatch.Voice{Slurm: "sbatch"} // as parity-sbatch's main sets it
	}
	code := sbatch.Run(context.Background(), argv[1:], senv, &out, &errb, noWait)
	return out.String(), errb.String(), code
}

// jobNumbers hides job ids, which differ between two runs of a submission.
var jobNumbers = regexp.MustCompile(`(?m)(batch job |"jobId": "|^)\d+`)

// TestLeanSubmitMatchesGRPC runs each submission through `sbatch` over
// gRPC (parity, parity-lite) and through the lean sbatch (parity-sbatch)
// against the same controller: same output, same errors, same exit
// status, and the lean one's jobs are queued as the others are.
func TestLeanSubmitMatchesGRPC(t *testing.T) {
	cl := startCLICluster(t)
	writeScript(t, cl.dir, "train.sh", trainScript)
	writeScript(t, cl.dir, "bad.sh", "#!/bin/bash\n#SBATCH --gpu-count=4\nhostname\n")
	writeScript(t, cl.dir, "ok.sh", "#!/bin/bash\n#SBATCH -J from-directive\nhostname\n")
	writeScript(t, cl.dir, "dos.sh", "#!/bin/bash\r\nhostname\r\n")
	cases := []struct {
		name  string
		user  string
		vars  map[string]string
		stdin string
		args  []string
		code  int
	}{
		{name: "parse-only json, directives, SBATCH_* and overrides", vars: map[string]string{"SBATCH_TIMELIMIT": "30", "SBATCH_PARTITION": "gpu"},
			args: []string{"--parse-only", "--json", "-p", "debug", "--ntasks-per-node=4", "train.sh", "--lr", "3e-4"}},
		{name: "parse-only text from stdin", stdin: "#!/bin/sh\n#SBATCH -t 5\nhostname\n", args: []string{"--parse-only"}},
		{name: "parse-only wrap json", args: []string{"--parse-only", "--json", "--wrap", "nvidia-smi -L", "-G", "2"}},
		{name: "invalid directive", args: []string{"bad.sh"}, code: 1},
		{name: "bad time", args: []string{"--time=abc", "ok.sh"}, code: 1},
		{name: "bad SBATCH_TIMELIMIT", vars: map[string]string{"SBATCH_TIMELIMIT": "1:2:3:4"}, args: []string{"ok.sh"}, code: 1},
		{name: "unknown option", args: []string{"--frobnicate", "ok.sh"}, code: 1},
		{name: "SLURM_EXIT_ERROR", vars: map[string]string{"SLURM_EXIT_ERROR": "3"}, args: []string{"--mem=4G", "--mem-per-cpu=1G", "ok.sh"}, code: 3},
		{name: "DOS line breaks", args: []string{"dos.sh"}, code: 1},
		{name: "missing script", args: []string{"missing.sh"}, code: 1},
		{name: "connection flag without value", args: []string{"--controller"}, code: 1},
		{name: "submit", args: []string{"ok.sh"}},
		{name: "submit parsable wrap", args: []string{"--parsable", "--wrap", "hostname"}},
		{name: "submit json", args: []string{"--json", "-G", "2", "ok.sh"}},
		{name: "submit quiet", args: []string{"-Q", "ok.sh"}},
		{name: "accepted option warns", args: []string{"--hint=nomultithread", "ok.sh"}},
		{name: "submit from stdin", stdin: "#!/bin/sh\n#SBATCH --gres=gpu:h100:2\nhostname\n", args: []string{"--parsable"}},
		{name: "SBATCH_* honoured by the controller", vars: map[string]string{"SBATCH_PARTITION": "debug", "SBATCH_TIMELIMIT": "45"},
			args: []string{"ok.sh"}, code: 1},
		{name: "test-only", args: []string{"--test-only", "-p", "debug", "ok.sh"}},
		{name: "test-only json", args: []string{"--test-only", "--json", "ok.sh"}},
		{name: "no such partition", args: []string{"-p", "nosuch", "ok.sh"}, code: 1},
		{name: "several partitions", args: []string{"-p", "gpu,debug", "ok.sh"}},
		{name: "a listed partition dropped with a warning", args: []string{"-p", "debug,gpu", "-t", "2:00:00", "ok.sh"}},
		{name: "more GPUs than a node has", args: []string{"--gres=gpu:h100:9", "ok.sh"}, code: 1},
		{name: "time over the partition's", args: []string{"-p", "debug", "-t", "2:00:00", "ok.sh"}, code: 1},
		{name: "refused with SLURM_EXIT_ERROR", vars: map[string]string{"SLURM_EXIT_ERROR": "7"}, args: []string{"-p", "nosuch", "ok.sh"}, code: 7},
		{name: "forged token", vars: map[string]string{client.EnvToken: "pt1.forged"}, args: []string{"ok.sh"}, code: 1},
		{name: "no token", vars: map[string]string{client.EnvToken: "", "XDG_CONFIG_HOME": cl.dir + "/none"}, args: []string{"ok.sh"}, code: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(client.EnvToken, "") // only the test environment's variables count
			t.Setenv("XDG_CONFIG_HOME", cl.dir+"/none")
			env := func() userEnv {
				e := cl.as("alice", c.vars)
				e.stdin = strings.NewReader(c.stdin)
				return e
			}
			argv := append([]string{"sbatch"}, c.args...)
			gout, gerr, gcode := runCLI(env(), argv...)
			lout, lerr, lcode := runLean(t, env(), argv...)
			if gcode != c.code {
				t.Errorf("gRPC sbatch exit %d, want %d\nstderr %s", gcode, c.code, gerr)
			}
			if lcode != gcode || jobNumbers.ReplaceAllString(lout, "${1}N") != jobNumbers.ReplaceAllString(gout, "${1}N") || lerr != gerr {
				t.Errorf("lean sbatch differs from gRPC sbatch:\nexit %d / %d\nstdout %q\n    vs %q\nstderr %q\n    vs %q",
					lcode, gcode, lout, gout, lerr, gerr)
			}
		})
	}
	// The lean submissions are queued as the gRPC ones are, script included.
	id := strings.TrimSpace(lastLean(t, cl, "--parsable", "-J", "lean-one", "--gres=gpu:h100:3", "ok.sh", "a1"))
	rec := record(cl.ok(cl.as("alice", nil), "scontrol", "show", "job", id))
	if rec["JobName"] != "lean-one" || rec["JobState"] != "PENDING" || !strings.Contains(rec["TresPerNode"]+rec["TRES"], "3") {
		t.Errorf("job %s as scontrol shows it: %v", id, rec)
	}
	// Command= is the script's file, absolute, from either sbatch; a
	// --wrap job has none.
	if want := filepath.Join(cl.dir, "ok.sh"); rec["Command"] != want {
		t.Errorf("lean sbatch: Command=%q, want %q", rec["Command"], want)
	}
	alice := cl.as("alice", nil)
	grpc := strings.TrimSpace(cl.ok(alice, "sbatch", "--parsable", "ok.sh"))
	wrap := strings.TrimSpace(cl.ok(alice, "sbatch", "--parsable", "--wrap", "true"))
	if got := record(cl.ok(alice, "scontrol", "show", "job", grpc))["Command"]; got != filepath.Join(cl.dir, "ok.sh") {
		t.Errorf("sbatch: Command=%q, want the script's path", got)
	}
	if got := record(cl.ok(alice, "scontrol", "show", "job", wrap))["Command"]; got != "(null)" {
		t.Errorf("sbatch --wrap: Command=%q, want (null)", got)
	}
	if got := cl.ok(alice, "squeue", "-h", "-j", grpc, "-o", "%o"); strings.TrimSpace(got) != filepath.Join(cl.dir, "ok.sh") {
		t.Errorf("squeue %%o = %q, want the script's path", got)
	}
}

// lastLean submits through the lean sbatch as alice and returns stdout.
func lastLean(t *testing.T, cl *cliCluster, args ...string) string {
	t.Helper()
	env := cl.as("alice", nil)
	out, errs, code := runLean(t, env, append([]string{"sbatch"}, args...)...)
	if code != 0 {
		t.Fatalf("lean sbatch %q: exit %d: %s", args, code, errs)
	}
	return out
}

// TestLeanSubmitUnreachable: both say where they looked and what to do.
func TestLeanSubmitUnreachable(t *testing.T) {
	cl := startCLICluster(t)
	writeScript(t, cl.dir, "ok.sh", "#!/bin/bash\nhostname\n")
	vars := map[string]string{client.EnvController: closedAddr(t)}
	maps.Copy(vars, map[string]string{"SLURM_EXIT_ERROR": "5"})
	_, gerr, gcode := runCLI(cl.as("alice", vars), "sbatch", "ok.sh")
	_, lerr, lcode := runLean(t, cl.as("alice", vars), "sbatch", "ok.sh")
	hint := "hint: is the controller running at " + vars[client.EnvController]
	if gcode != 5 || lcode != 5 || !strings.Contains(gerr, hint) || !strings.Contains(lerr, hint) {
		t.Errorf("exit %d / %d\ngRPC: %s\nlean: %s", gcode, lcode, gerr, lerr)
	}
}
