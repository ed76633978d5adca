// Command benchreadme measures the figures in the README's performance
// tables and writes them there, with the date, the commit and the
// machine's load, so the tables are regenerated rather than edited by
// hand: `make bench-readme` (go run ./cmd/internal/benchreadme --write
// README.md). Run it on a quiet machine; it takes a few minutes.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

func main() {
	write := flag.String("write", "", "README file to fill between its bench-readme markers (default: print the block)")
	runs := flag.Int("runs", 3, "scheduling-pass runs per scenario")
	flag.Parse()
	if err := run(context.Background(), *write, *runs, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench-readme:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string, runs int, progress io.Writer) error {
	if runs < 1 {
		return fmt.Errorf("--runs=%d: want at least 1", runs)
	}
	var b strings.Builder
	load0 := loadAverage()
	start := time.Now().UTC()
	fmt.Fprintln(progress, "scheduling pass: every scenario", runs, "times")
	b.WriteString("| scenario | `parity bench sched`, each run | target | B a pending job | met |\n|---|---|---|---|---|\n")
	for _, s := range core.DefaultBenchSizes() {
		var ms []string
		met, bytes := true, 0.0
		for range runs {
			r := core.RunBench(s)
			ms = append(ms, fmt.Sprintf("%.1f", r.MSPerPass))
			met, bytes = met && r.Met, r.BytesPerPendingJob
		}
		fmt.Fprintf(&b, "| %s | %s ms | ≤ %.0f ms | %.0f | %s |\n", s.Name, strings.Join(ms, ", "), s.TargetMS, bytes, yes(met))
		fmt.Fprintf(progress, "  %s: %s ms\n", s.Name, strings.Join(ms, ", "))
	}
	b.WriteString("\n| what | benchmark | figure | target |\n|---|---|---|---|\n")
	for _, gb := range readmeBenches() {
		fmt.Fprintf(progress, "go test %s -bench %s\n", gb.Pkg, gb.Bench)
		m, err := goTestBench(ctx, gb)
		if err != nil {
			return err
		}
		cmd := fmt.Sprintf("`go test %s -run '^$' -bench '%s'", gb.Pkg, gb.Bench)
		if gb.Benchtime != "" {
			cmd += " -benchtime " + gb.Benchtime
		}
		fmt.Fprintf(&b, "| %s | %s` | %s | %s |\n", gb.What, cmd, gb.Show(m), gb.Target)
	}
	fmt.Fprintf(&b, "\nMeasured %s–%s UTC at commit %s on %d CPUs (%s), load average %s at the start and %s at the end.\n",
		start.Format("2006-01-02 15:04"), time.Now().UTC().Format("15:04"), commit(ctx), runtime.NumCPU(), runtime.Version(), load0, loadAverage())
	if path == "" {
		_, err := io.WriteString(os.Stdout, b.String())
		return err
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := splice(string(doc), b.String())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

func goTestBench(ctx context.Context, gb goBench) (metrics, error) {
	args := []string{"test", "-run", "^$", "-bench", "^Benchmark" + gb.Bench, "-count", "1"}
	if gb.Benchtime != "" {
		args = append(args, "-benchtime", gb.Benchtime)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, gb.Pkg)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	m, err := parseBench(bytes.NewReader(out.Bytes()), gb.Bench)
	if err != nil {
		return nil, fmt.Errorf("go test %s -bench %s: %w\n%s", gb.Pkg, gb.Bench, err, out.String())
	}
	return m, nil
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// loadAverage is the one-minute load average, or "?" off Linux.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// commit names HEAD, marked when the tree has changes the figures include.
func commit(ctx context.Context) string {
	id, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(id))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += " (with uncommitted changes)"
	}
	return c
}
