package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/agentcmd"
	"github.com/parityhpc/parity/conformance"
	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/reports"
)

// TestMain makes the test binary act as the parity binary when called
// with a verb (not a -test flag): the lab's job shims (`agent shim`), the
// conformance probe (`conform probe`) and the child runs of the tests
// below re-execute it that way.
func TestMain(m *testing.M) {
	// Copied as parity-agent beside a copy of itself (leanLabBinaries), it
	// is that binary: the agent command without the simulators.
	if filepath.Base(os.Args[0]) == cluster.LeanAgent {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		cmd := agentcmd.New(agentcmd.Options{Version: version, ShimArgs: []string{"shim"}})
		cmd.SetArgs(os.Args[1:])
		err := cmd.ExecuteContext(ctx)
		stop()
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := runWithLabVerbs(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// runWithLabVerbs runs the root command with conform and lab registered
// (main.go registers them; this keeps the tests independent of that).
func runWithLabVerbs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	have := map[string]bool{}
	for _, c := range root.Commands() {
		have[c.Name()] = true
	}
	for _, c := range []*cobra.Command{newConformCmd(), newLabCmd()} {
		if !have[c.Name()] {
			root.AddCommand(c)
		}
	}
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		io.WriteString(stderr, "parity: "+err.Error()+"\n")
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	return 0
}

// parityChild runs this test binary as `parity ARGS…`.
func parityChild(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exec.Command(exe, args...)
}

func TestConformRunsAFocusedSuiteAndWritesTheReport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the default lab")
	}
	out := filepath.Join(t.TempDir(), "report")
	cmd := parityChild(t, "conform", "--out", out, "--focus", "placement/count-and-type|isolation/(visible-devices|cpuset)")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("parity conform: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, f := range []string{reports.HTMLFile, reports.JSONFile, reports.JUnitFile} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	text := stdout.String()
	for _, want := range []string{"PASS isolation/visible-devices [nvidia]", "isolation/cpuset", "PARITY", "Report: " + filepath.Join(out, reports.HTMLFile)} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	f, err := os.Open(filepath.Join(out, reports.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := reports.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, s := range run.Specs {
		if s.Status == reports.StatusSkipped && s.Reason != "no GPUs" {
			t.Errorf("%s [%s] skipped: %s", s.ID, s.Vendor, s.Reason)
		}
		if s.Status == reports.StatusPassed && !s.CrossVendor() {
			ran++
		}
	}
	if ran < 7 { // count+visible on two GPU vendors, cpuset on three
		t.Errorf("%d vendor results passed, want 7:\n%s", ran, text)
	}
}

func TestConformUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown lab", []string{"conform", "--lab", "no-such-lab", "--out", t.TempDir()}, `no built-in lab "no-such-lab"`},
		{"bad focus", []string{"conform", "--focus", "(", "--out", t.TempDir()}, "--focus"},
		{"target without vendors", []string{"conform", "--target", "127.0.0.1:1", "--token", "x", "--out", t.TempDir()}, "--vendors"},
		{"empty node parity", []string{"conform", "--target", "127.0.0.1:1", "--token", "x", "--vendors", "v.yaml", "--node-parity", " ", "--out", t.TempDir()}, "--node-parity"},
		{"unreadable compare", []string{"conform", "--compare", "/no/such/report.json", "--out", t.TempDir()}, "--compare"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runWithLabVerbs(context.Background(), tc.args, &stdout, &stderr)
			if code == 0 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want non-zero and %q", code, stderr.String(), tc.want)
			}
		})
	}
	// A flag error leaves no report folder behind.
	out := filepath.Join(t.TempDir(), "report")
	var stdout, stderr bytes.Buffer
	if code := runWithLabVerbs(context.Background(), []string{"conform", "--focus", "(", "--out", out}, &stdout, &stderr); code == 0 {
		t.Fatal("a bad --focus was accepted")
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--out %s after a flag error: %v, want it not made", out, err)
	}
}

func TestConformProbeReportsWhatAJobSees(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PARITY_PROBE_TEST_VAR", "0,1")
	var stdout, stderr bytes.Buffer
	code := runWithLabVerbs(context.Background(), []string{"conform", "probe", "inspect", "--env", "PARITY_PROBE_TEST_VAR,UNSET_VAR",
		"--open", file + "," + filepath.Join(dir, "missing")}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep conformance.ProbeReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if rep.Env["PARITY_PROBE_TEST_VAR"] != "0,1" || len(rep.Env) != 1 {
		t.Errorf("env %v", rep.Env)
	}
	if rep.Open[file] != conformance.OpenOK || rep.Open[filepath.Join(dir, "missing")] != "ENOENT" {
		t.Errorf("open %v", rep.Open)
	}
	if rep.CPUs == "" {
		t.Error("no Cpus_allowed_list")
	}
}

func TestConformProgressLines(t *testing.T) {
	events := []conformance.Progress{
		{Done: 0, Total: 12, Spec: "placement/island", Vendor: "amd"},
		{Done: 1, Total: 12, Spec: "placement/island", Vendor: "amd", Ended: true, Status: reports.StatusPassed},
		{Done: 1, Total: 12, Spec: "parity/placement/island"},
		{Done: 2, Total: 12, Spec: "parity/placement/island", Ended: true, Status: reports.StatusFailed},
	}
	tests := []struct {
		tty        bool
		want, not  []string
		finalReset bool
	}{
		// Plain: one line per finished spec, nothing for starts.
		{tty: false, want: []string{"[ 1/12] PASS placement/island [amd]", "[ 2/12] FAIL parity/placement/island [all vendors]"},
			not: []string{"\r", "…"}},
		// Terminal: the current spec on one rewritten line, failures kept.
		{tty: true, want: []string{"\r\x1b[K[ 0/12] placement/island [amd] …", "\r\x1b[KFAIL parity/placement/island [all vendors]\n"},
			not: []string{"PASS placement/island"}, finalReset: true},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		p := &conformProgress{w: &b, tty: tc.tty}
		for _, ev := range events {
			p.update(ev)
		}
		p.finish()
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("tty=%v: output lacks %q:\n%q", tc.tty, w, b.String())
			}
		}
		for _, n := range tc.not {
			if strings.Contains(b.String(), n) {
				t.Errorf("tty=%v: output has %q:\n%q", tc.tty, n, b.String())
			}
		}
		if tc.finalReset && !strings.HasSuffix(b.String(), "\r\x1b[K\n") {
			t.Errorf("tty output does not clear its progress line at the end: %q", b.String())
		}
	}
}
