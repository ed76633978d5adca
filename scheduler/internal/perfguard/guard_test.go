package perfguard

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const baselinesFile = "testdata/baselines.json"

// newRunner finds valgrind and the module root. Without valgrind the
// guards skip on a developer's machine and fail in CI, which installs it.
func newRunner(t *testing.T) *Runner {
	t.Helper()
	vg, err := exec.LookPath("valgrind")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("perf guards need valgrind (.ci/run installs it): not on PATH")
		}
		t.Skip("skipped: the perf guards count instructions with valgrind, which is not installed (apt-get install valgrind)")
	}
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return &Runner{Root: filepath.Dir(strings.TrimSpace(string(gomod))), Dir: t.TempDir(), Valgrind: vg}
}

// TestPerfGuards counts each guarded path's instructions and fails when
// one costs more than 10% over its committed baseline.
// PARITY_PERFGUARD_UPDATE=1 (make bench-baseline) rewrites the baselines.
func TestPerfGuards(t *testing.T) {
	r := newRunner(t)
	update := os.Getenv("PARITY_PERFGUARD_UPDATE") != ""
	base, err := LoadBaselines(baselinesFile)
	if err != nil && !update {
		t.Fatal(err)
	}
	if base == nil {
		base = Baselines{}
	}
	for _, g := range Guards() {
		got, err := r.Count(context.Background(), g, g.Name)
		if err != nil {
			t.Errorf("%s: %v", g.Name, err)
			continue
		}
		t.Logf("%s: %s instructions per operation (baseline %s): %s", g.Name, grouped(got), grouped(base[g.Name]), g.What)
		if update {
			base[g.Name] = got
			continue
		}
		if err := Check(g, got, base[g.Name]); err != nil {
			t.Error(err)
		} else if float64(got) < float64(base[g.Name])*(1-Tolerance) {
			t.Logf("%s is more than 10%% under its baseline: run `make bench-baseline` to keep the gain", g.Name)
		}
	}
	if update {
		if err := base.Save(baselinesFile); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", baselinesFile)
	}
}

// TestGuardFailsOnASlowedPass: a scheduling pass made deliberately
// slower (it does its work twice) fails the sched-10k guard, with a
// message that names the guard and both counts.
func TestGuardFailsOnASlowedPass(t *testing.T) {
	r := newRunner(t)
	base, err := LoadBaselines(baselinesFile)
	if err != nil {
		t.Fatal(err)
	}
	g := Guards()[0]
	if g.Name != "sched-10k" {
		t.Fatalf("the first guard is %s, want sched-10k", g.Name)
	}
	slowed, err := r.Count(context.Background(), g, "sched-10k-slowed")
	if err != nil {
		t.Fatal(err)
	}
	err = Check(g, slowed, base[g.Name])
	if err == nil {
		t.Fatalf("a pass doing twice the work (%s instructions) passed the guard against %s", grouped(slowed), grouped(base[g.Name]))
	}
	for _, want := range []string{"sched-10k", grouped(slowed), grouped(base[g.Name])} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the guard's message lacks %q: %v", want, err)
		}
	}
}

func TestCheckAllowsTheTolerance(t *testing.T) {
	g := Guard{Name: "g", What: "one thing"}
	cases := []struct {
		got, base int64
		fails     bool
	}{
		{1000, 1000, false},
		{1100, 1000, false},
		{1101, 1000, true},
		{500, 1000, false},
		{1000, 0, true},
	}
	for _, c := range cases {
		if err := Check(g, c.got, c.base); (err != nil) != c.fails {
			t.Errorf("Check(%d against %d) = %v, want failure %v", c.got, c.base, err, c.fails)
		}
	}
	if s := grouped(1234567); s != "1,234,567" {
		t.Errorf("grouped = %q", s)
	}
}

func TestCountSteadyLeavesTheIdleRuntimeOut(t *testing.T) {
	out := `desc: I1 cache:
cmd: x
events: Ir
fl=a.go
fn=main.work
10 100
11 50
fn=runtime.sysmon
5 1000
fn=runtime.mallocgc
7 30
fn=internal/runtime/maps.(*Map).putSlot
3 20
fn=os/signal.signal_recv
1 999
summary: 2199
`
	n, err := countSteady(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if n != 200 {
		t.Errorf("counted %d instructions, want 200 (work, allocation and maps; not sysmon or signals)", n)
	}
	if _, err := countSteady(strings.NewReader("fn=x\n1 2\n")); err == nil {
		t.Error("a file without an events line was read")
	}
}
