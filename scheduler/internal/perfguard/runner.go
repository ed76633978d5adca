package perfguard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Runner builds workloads' test binaries and counts their instructions.
type Runner struct {
	// Root is the module root; Dir holds binaries and callgrind files.
	Root, Dir string
	// Valgrind is the valgrind executable.
	Valgrind string
	built    map[string]string
}

// runTimeout bounds one run under callgrind (about 50× slower than native).
const runTimeout = 5 * time.Minute

// Binary builds pkg's test binary (without the race detector) once.
func (r *Runner) Binary(ctx context.Context, pkg string) (string, error) {
	if bin, ok := r.built[pkg]; ok {
		return bin, nil
	}
	bin := filepath.Join(r.Dir, strings.NewReplacer("/", "_", ".", "_").Replace(pkg)+".test")
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, pkg)
	cmd.Dir = r.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("perfguard: build %s: %w\n%s", pkg, err, out)
	}
	if r.built == nil {
		r.built = map[string]string{}
	}
	r.built[pkg] = bin
	return bin, nil
}

// Count measures workload (g.Name, or another workload of g.Pkg) and
// returns instructions per operation: the difference between a run of
// 2×Ops operations and one of Ops, divided by Ops.
func (r *Runner) Count(ctx context.Context, g Guard, workload string) (int64, error) {
	bin, err := r.Binary(ctx, g.Pkg)
	if err != nil {
		return 0, err
	}
	one, err := r.run(ctx, bin, g, workload, g.Ops)
	if err != nil {
		return 0, err
	}
	two, err := r.run(ctx, bin, g, workload, 2*g.Ops)
	if err != nil {
		return 0, err
	}
	return (two - one) / int64(g.Ops), nil
}

// run runs the workload once with ops operations and returns the
// instructions counted.
func (r *Runner) run(ctx context.Context, bin string, g Guard, workload string, ops int) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	out := filepath.Join(r.Dir, fmt.Sprintf("%s-%d.cachegrind", workload, ops))
	os.Remove(out)
	vg := []string{r.Valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=" + out}
	args := []string{"-test.run=^TestPerfGuardWorkload$", "-test.count=1"}
	cmd := exec.CommandContext(ctx, bin, args...)
	if g.Mode == Self {
		cmd = exec.CommandContext(ctx, vg[0], append(append(vg[1:], bin), args...)...)
	}
	// One thread of Go code, no collector and no asynchronous preemption.
	cmd.Env = append(os.Environ(), "GOGC=off", "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1",
		EnvWorkload+"="+workload, EnvOps+"="+strconv.Itoa(ops))
	if g.Mode == Child {
		cmd.Env = append(cmd.Env, EnvChildValgrind+"="+strings.Join(vg, " "))
	}
	cmd.Dir = filepath.Join(r.Root, g.Pkg)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("perfguard: workload %s (%d ops): %w\n%s", workload, ops, err, tail(output.String(), 4000))
	}
	f, err := os.Open(out)
	if err != nil {
		return 0, fmt.Errorf("perfguard: workload %s (%d ops): cachegrind output: %w\n%s", workload, ops, err, tail(output.String(), 4000))
	}
	defer f.Close()
	n, err := countSteady(f)
	if err != nil {
		return 0, fmt.Errorf("perfguard: workload %s (%d ops): %s: %w", workload, ops, out, err)
	}
	return n, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// Baselines are committed counts per operation, by guard name.
type Baselines map[string]int64

// LoadBaselines reads a baselines file.
func LoadBaselines(path string) (Baselines, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("perfguard: baselines: %w", err)
	}
	var out Baselines
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("perfguard: baselines %s: %w", path, err)
	}
	return out, nil
}

// Save writes the baselines (sorted keys, one per line).
func (b Baselines) Save(path string) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
