package compat

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// recordSacct records the sacct states on a Slurm with accounting (the
// accounting anchor's slurm.conf):
// go test ./cmd/internal/compat -run TestSacctCorpus -args -record-sacct /tmp/sa-acct/slurm.conf
var recordSacct = flag.String("record-sacct", "", "record the sacct states on the Slurm (with slurmdbd) whose slurm.conf this names")

// TestSacctCorpus builds the sacct states (jobs that completed, failed,
// ran with GPUs, an array, one cancelled while it ran) on a lab of the
// anchor's shape and compares sacct's outputs with Slurm 22.05's on the
// accounting anchor column by column, as TestStatusCorpus does for the
// other status commands. It needs root (lab agents run the jobs) and the
// go command (sacct is parity acct, built here).
func TestSacctCorpus(t *testing.T) {
	if *recordSacct != "" {
		recordOn(t, *recordSacct, SacctPath, SacctStates, SacctInvocations)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: lab agents need root to run jobs")
	}
	if testing.Short() {
		t.Skip("skipped in -short: builds cmd/parity (sacct is parity acct)")
	}
	want, err := LoadStates(SacctPath)
	if err != nil {
		t.Fatal(err)
	}
	checkRecorded(t, SacctPath, want, SacctStates, SacctInvocations)
	side, dir := startAnchorLab(t, false)
	side.parity = buildParity(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := buildStates(ctx, side, filepath.Join(dir, "sacct"), 20*time.Millisecond, SacctStates, SacctInvocations)
	if err != nil {
		t.Fatal(err)
	}
	if *labStates != "" {
		if err := SaveStates(*labStates, got); err != nil {
			t.Fatal(err)
		}
	}
	compareStates(t, want, got, SacctDifferencesPath)
}

// buildParity compiles cmd/parity into the test's directory.
func buildParity(t *testing.T) string {
	t.Helper()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		t.Skipf("skipped: no go command to build cmd/parity: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "parity")
	if out, err := exec.Command(gobin, "build", "-o", bin, "github.com/parityhpc/parity/cmd/parity").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/parity: %v\n%s", err, out)
	}
	return bin
}

// runParity runs the built parity with exactly vars as its environment.
func runParity(ctx context.Context, dir string, vars map[string]string, bin string, args []string) (string, string, int) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	slices.Sort(cmd.Env)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return out.String(), err.Error(), 127
		}
		return out.String(), errb.String(), ee.ExitCode()
	}
	return out.String(), strings.TrimSpace(errb.String()), 0
}
