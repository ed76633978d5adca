package conformance

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/contract"
)

// childEnv names the file a child run writes its report to; ginkgo runs
// one suite per process, so each extra run is a child process.
const childEnv = "PARITY_CONFORMANCE_CHILD_REPORT"

// brokenDriver is a vendor driver with a bug: it makes one GPU more
// visible than the job holds.
type brokenDriver struct{ vendors.Driver }

func (b brokenDriver) Prepare(ctx context.Context, a vendors.Allocation) (vendors.Prepared, error) {
	p, err := b.Driver.Prepare(ctx, a)
	if err != nil || len(a.Devices) == 0 {
		return p, err
	}
	for _, v := range b.Info().VisibleDevicesEnv {
		p.Env[v] = Ordinals(len(a.Devices) + 1)
	}
	return p, nil
}

// The optional capabilities pass through, so only Prepare is broken.
func (b brokenDriver) Sample(ctx context.Context) ([]gres.Sample, error) {
	return b.Driver.(vendors.Sampler).Sample(ctx)
}

func (b brokenDriver) WatchHealth(ctx context.Context, emit func(gres.Condition)) error {
	return b.Driver.(vendors.HealthWatcher).WatchHealth(ctx, emit)
}

func (b brokenDriver) Diagnose(ctx context.Context, uuid string, level int) (gres.Diagnosis, error) {
	return b.Driver.(vendors.Diagnoser).Diagnose(ctx, uuid, level)
}

// childMain runs the visible-devices specs on the default lab with the
// drivers of the lab's first node set broken, and writes the run's JSON
// (and, beside it, the broken vendor's name).
func childMain() int {
	out := os.Getenv(childEnv)
	lab, err := labfile.Builtin("default")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	first := lab.NodeList()[0].Template
	var mu sync.Mutex
	broken := ""
	wrap := func(node string, d vendors.Driver) vendors.Driver {
		for _, n := range lab.NodeList() {
			_, samp := d.(vendors.Sampler)
			if n.Name == node && n.Template == first && len(d.Info().VisibleDevicesEnv) > 0 && samp {
				mu.Lock()
				broken = d.Info().Vendor
				mu.Unlock()
				return brokenDriver{d}
			}
		}
		return d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	target, err := NewLab(ctx, LabOptions{Lab: lab, WrapDriver: wrap})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer target.Close(context.Background())
	// The contract's slow checks (a polling watcher) are not what this run is about.
	run, err := Run(ctx, target, Options{Focus: regexp.MustCompile(`visible-devices|multinode/gpus-on-node`), Account: "lab", JobTimeout: time.Minute,
		ContractTimeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := writeChildRun(childEnv, run); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	mu.Lock()
	defer mu.Unlock()
	if err := os.WriteFile(out+".vendor", []byte(broken), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// TestBrokenVendorTurnsItsColumnRed breaks one vendor's driver (a visible-
// devices variable one GPU too long) and checks that vendor's column fails
// the visible-devices specs, the other vendors' pass, and the parity spec
// fails naming both sides.
func TestBrokenVendorTurnsItsColumnRed(t *testing.T) {
	t.Parallel() // each starts its own lab, under its own cgroup root
	if testing.Short() {
		t.Skip("starts a lab")
	}
	if os.Geteuid() != 0 {
		t.Skip("job isolation (and so the visible-devices spec) needs root")
	}
	run, out := childRun(t, childEnv)
	b, err := os.ReadFile(out + ".vendor")
	if err != nil || len(b) == 0 {
		t.Fatalf("the child broke no vendor (%v)", err)
	}
	broken := string(b)
	status := map[reports.Key]reports.SpecResult{}
	for _, s := range run.Specs {
		status[s.Key()] = s
	}
	for _, id := range []string{"isolation/visible-devices", contract.SpecID(contract.CheckVisibleDevices), "multinode/gpus-on-node"} {
		for _, v := range run.Vendors {
			s := status[reports.Key{ID: id, Vendor: v.Name}]
			switch {
			case v.Name == broken && s.Status != reports.StatusFailed:
				t.Errorf("%s on the broken vendor %s: %s (%s), want failed", id, v.Name, s.Status, s.Reason)
			case v.Name != broken && v.Model != "" && s.Status != reports.StatusPassed:
				t.Errorf("%s on %s: %s (%s), want passed", id, v.Name, s.Status, s.Reason)
			}
		}
	}
	checkFailureEvidence(t, status[reports.Key{ID: "isolation/visible-devices", Vendor: broken}])
	p := status[reports.Key{ID: reports.ParityID("isolation/visible-devices")}]
	if p.Status != reports.StatusFailed || !strings.Contains(p.Reason, broken) {
		t.Errorf("parity of visible-devices: %s (%s), want failed naming %s", p.Status, p.Reason, broken)
	}
	var matrix strings.Builder
	if err := reports.WriteMatrix(&matrix, run, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(matrix.String(), "FAIL isolation/visible-devices ["+broken+"]") {
		t.Errorf("the matrix does not name the failing spec and vendor:\n%s", matrix.String())
	}
}

// checkFailureEvidence requires what an operator needs to understand a
// failure without rerunning it: the command that submitted the job, the
// environment it started with, the device files it tried and what each
// open gave, and the decision-log records naming the job.
func checkFailureEvidence(t *testing.T, res reports.SpecResult) {
	t.Helper()
	byKind := map[string]string{}
	devices := 0
	for _, ev := range res.Evidence {
		byKind[ev.Kind] += ev.Text + "\n"
		if ev.Kind == "env" {
			devices += len(ev.Data)
		}
	}
	for _, want := range []struct{ kind, text string }{
		{"failure", "in a job holding"},
		{"command", "sbatch --job-name=conform-inspect"},
		{"command", "--gres=gpu:"},
		{"command", "--- script ---"},
		{"env", "SLURM_JOB_ID="},
		{"decisions", " start "},
		{"decisions", " end "},
	} {
		if !strings.Contains(byKind[want.kind], want.text) {
			t.Errorf("%s [%s]: the %q evidence does not contain %q; evidence:\n%v", res.ID, res.Vendor, want.kind, want.text, res.Evidence)
		}
	}
	if devices == 0 {
		t.Errorf("%s [%s]: no device file and its open result in the evidence: %v", res.ID, res.Vendor, res.Evidence)
	}
}
