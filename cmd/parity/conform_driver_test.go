package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/contract"
	"github.com/parityhpc/parity/vendors/plugin"
)

var conformEpoch = time.Date(2025, 6, 1, 3, 0, 0, 0, time.UTC)

func fixedConformEnv() conformDriverEnv {
	return conformDriverEnv{now: func() time.Time { return conformEpoch },
		hostname: func() (string, error) { return "ci-host", nil }}
}

// conformDriver runs the command with args and returns its output and error.
func conformDriver(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newConformDriverCmdWith(fixedConformEnv())
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func readReport(t *testing.T, dir string) reports.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, reports.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var run reports.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, reports.JUnitFile)); err != nil {
		t.Errorf("no JUnit report: %v", err)
	}
	return run
}

// startAdapter runs the example adapter binary until the test ends.
func startAdapter(t *testing.T, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("example-driver %v: %v\n%s", args, err, logs.String())
		}
	})
}

// TestConformDriverCertifiesTheExampleAdapter is the done-when: the
// example adapter, built and run as its own process, passes certification
// with nothing skipped.
func TestConformDriverCertifiesTheExampleAdapter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example adapter")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "example-driver")
	build := exec.Command("go", "build", "-o", bin, "github.com/parityhpc/parity/cmd/example-driver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root, sock := filepath.Join(dir, "hw"), filepath.Join(dir, "exg.sock")
	emptySock := filepath.Join(dir, "empty.sock")
	args := []string{"--socket", sock, "--root", root, "--seed", "9", "--poll", "20ms"}
	if os.Geteuid() == 0 {
		args = append(args, "--device-nodes")
	}
	startAdapter(t, bin, args...)
	startAdapter(t, bin, "--socket", emptySock, "--root", filepath.Join(dir, "empty"), "--devices", "0")
	out := filepath.Join(dir, "report")
	text, err := conformDriver(t, "--contract-only", "--plugin", "unix://"+sock, "--empty-plugin", emptySock, "--root", root,
		"--trigger", bin+" inject --root "+root+" --device 1", "--out", out, "--timeout", "20s")
	if err != nil {
		t.Fatalf("conform driver: %v\n%s", err, text)
	}
	t.Log("\n" + text)
	if !strings.Contains(text, "14 passed, 0 failed, 0 skipped") || !strings.Contains(text, "driver examplegpu") {
		t.Errorf("output:\n%s\nwant every check passed for examplegpu", text)
	}
	run := readReport(t, out)
	if len(run.Vendors) != 1 || run.Vendors[0] != (reports.Vendor{Name: "examplegpu", Driver: "examplegpu",
		DriverVersion: "example/1", Devices: 4, Model: "exg1"}) {
		t.Errorf("vendors %+v; want the example adapter with 4 exg1 devices", run.Vendors)
	}
	if run.Target != "plugin:unix://"+sock || run.Host != "ci-host" || !run.Started.Equal(conformEpoch) {
		t.Errorf("run target %q host %q started %v", run.Target, run.Host, run.Started)
	}
	if len(run.Specs) != 14 {
		t.Fatalf("%d specs; want 14", len(run.Specs))
	}
	for i, c := range contract.Checks() {
		s := run.Specs[i]
		if s.Status != reports.StatusPassed || s.Area != reports.AreaDriverContract || s.Vendor != "examplegpu" ||
			s.ID != contract.SpecID(c.Name) || s.Name != c.Description {
			t.Errorf("spec %+v; want a passed %s spec for examplegpu", s, contract.SpecID(c.Name))
		}
	}
}

// misorderedAMD lists the prepared render nodes against bus order.
type misorderedAMD struct{ *amd.Driver }

func (d misorderedAMD) Prepare(ctx context.Context, a vendors.Allocation) (vendors.Prepared, error) {
	p, err := d.Driver.Prepare(ctx, a)
	if err == nil && len(p.DeviceFiles) > 2 {
		slices.Reverse(p.DeviceFiles[:len(p.DeviceFiles)-1])
	}
	return p, err
}

func TestConformDriverReportsFailuresAndSkips(t *testing.T) {
	root := t.TempDir()
	if _, err := amdsim.Generate(root, amdsim.Config{GPUs: 4, Seed: 31}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "amd.sock")
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- plugin.Serve(ctx, sock, misorderedAMD{amd.New(root, amd.WithLogger(slog.New(slog.DiscardHandler)))},
			plugin.WithServerLogger(slog.New(slog.DiscardHandler)), plugin.WithReady(func() { close(ready) }))
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	defer func() { cancel(); <-done }()

	out := t.TempDir()
	text, err := conformDriver(t, "--contract-only", "--plugin", sock, "--root", root, "--out", out)
	if err == nil || !strings.Contains(err.Error(), "1 of 14 checks failed") {
		t.Fatalf("conform driver: %v; want one failed check\n%s", err, text)
	}
	if !tableRow(text, contract.SpecID(contract.CheckVisibleDevices), "FAIL") ||
		!tableRow(text, contract.SpecID(contract.CheckConditions), "skip") {
		t.Errorf("table:\n%s\nwant visible-devices FAIL and conditions skipped", text)
	}
	run := readReport(t, out)
	status := map[string]reports.Status{}
	for _, s := range run.Specs {
		status[s.ID] = s.Status
		if s.Status != reports.StatusPassed && s.Reason == "" {
			t.Errorf("spec %s is %s without a reason", s.ID, s.Status)
		}
	}
	want := map[string]reports.Status{
		contract.SpecID(contract.CheckVisibleDevices):     reports.StatusFailed,
		contract.SpecID(contract.CheckConditions):         reports.StatusSkipped,
		contract.SpecID(contract.CheckNotApplicable):      reports.StatusSkipped,
		contract.SpecID(contract.CheckStableAcrossReopen): reports.StatusPassed,
		contract.SpecID(contract.CheckDeviceFiles):        reports.StatusPassed,
	}
	for id, st := range want {
		if status[id] != st {
			t.Errorf("spec %s is %q; want %q", id, status[id], st)
		}
	}
	if run.Vendors[0].Name != "amd" || run.Vendors[0].Devices != 4 {
		t.Errorf("vendor %+v; want amd with 4 devices", run.Vendors[0])
	}
}

// tableRow reports whether a table row names check with result.
func tableRow(text, check, result string) bool {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == check && f[1] == result {
			return true
		}
	}
	return false
}

func TestConformDriverUsageErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.sock")
	tests := []struct {
		args []string
		want string
	}{
		{nil, `required flag(s) "plugin" not set`},
		{[]string{"--plugin", "tcp://h:1"}, "only unix sockets"},
		{[]string{"--plugin", missing, "--connect-timeout", "100ms"}, "is the adapter running"},
		{[]string{"--plugin", missing, "--timeout", "0s"}, "--timeout 0s must be positive"},
	}
	for _, tt := range tests {
		_, err := conformDriver(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("conform driver %q: %v; want an error containing %q", tt.args, err, tt.want)
		}
	}
}

// TestConformDriverRunsTheSuiteOnTheAdaptersLab certifies the example
// adapter end to end: the contract checks, then the suite on a lab whose
// node's accelerator is the adapter, in one report. The suite runs in a
// child process, as ginkgo allows one suite per process.
func TestConformDriverRunsTheSuiteOnTheAdaptersLab(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example adapter and runs the suite on a lab")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "example-driver")
	build := exec.Command("go", "build", "-o", bin, "github.com/parityhpc/parity/cmd/example-driver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Lab jobs run as nobody, who must reach the adapter's device files
	// (t.TempDir makes private directories).
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root, sock := filepath.Join(dir, "hw"), filepath.Join(dir, "exg.sock")
	args := []string{"--socket", sock, "--root", root, "--seed", "5", "--poll", "20ms"}
	if os.Geteuid() == 0 {
		args = append(args, "--device-nodes") // the lab confines jobs; the device files must be real
	}
	startAdapter(t, bin, args...)
	out := filepath.Join(dir, "report")
	cmd := parityChild(t, "conform", "driver", "--plugin", "unix://"+sock, "--root", root,
		"--trigger", bin+" inject --root "+root+" --device 1", "--out", out, "--timeout", "20s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("conform driver: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	run := readReport(t, out)
	if run.Target != "plugin:unix://"+sock || len(run.Vendors) != 1 || run.Vendors[0].Name != "examplegpu" {
		t.Fatalf("report of %q with vendors %+v; want the adapter's examplegpu only", run.Target, run.Vendors)
	}
	byKey := map[reports.Key]reports.SpecResult{}
	areas := map[string]int{}
	for _, s := range run.Specs {
		byKey[s.Key()] = s
		if s.Vendor == "examplegpu" && s.Status == reports.StatusPassed {
			areas[s.Area]++
		}
		if s.Status.Failing() {
			t.Errorf("%s [%s] %s: %s", s.ID, s.Vendor, s.Status, s.Reason)
		}
	}
	// The contract checks appear once, under their contract ids, with the
	// options given here (the trigger raised a condition).
	for _, c := range contract.Checks() {
		s, ok := byKey[reports.Key{ID: contract.SpecID(c.Name), Vendor: "examplegpu"}]
		if !ok || s.Name != c.Description {
			t.Errorf("no %s result named %q for examplegpu (got %+v)", contract.SpecID(c.Name), c.Description, s)
		}
	}
	if s := byKey[reports.Key{ID: contract.SpecID(contract.CheckConditions), Vendor: "examplegpu"}]; s.Status != reports.StatusPassed {
		t.Errorf("%s is %s (%s); the trigger should have raised a condition", s.ID, s.Status, s.Reason)
	}
	// The suite ran on the adapter's devices: jobs were placed, confined
	// and accounted there.
	for _, area := range []string{reports.AreaPlacement, reports.AreaIsolation, reports.AreaAccounting} {
		if areas[area] == 0 {
			t.Errorf("no %s spec passed on the adapter's lab", area)
		}
	}
	if os.Geteuid() == 0 {
		if s := byKey[reports.Key{ID: "isolation/device-files", Vendor: "examplegpu"}]; s.Status != reports.StatusPassed {
			t.Errorf("isolation/device-files on the adapter: %s (%s); want passed as root", s.Status, s.Reason)
		}
	}
	if !strings.Contains(stdout.String(), "Starting a lab of one node") {
		t.Errorf("output:\n%s\nwant the suite's progress after the contract table", stdout.String())
	}
	// The certificate covers the suite's report and a third party's
	// verify accepts it.
	got, err := verify(t, filepath.Join(out, reports.CertificateFile))
	if err != nil || !strings.Contains(got, "adapter examplegpu example/1 (vendor examplegpu)") ||
		!strings.Contains(got, "the driver contract and the suite") {
		t.Errorf("verify: %v\n%s", err, got)
	}
}
