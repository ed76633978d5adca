package compat

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/cmd/internal/userverbs"
	"github.com/parityhpc/parity/scheduler/agent/shim"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
)

// labShimArg makes the test binary the lab nodes' job supervisor; a copy
// of it named srun is Parity's srun inside the env cases' jobs.
const labShimArg = "__parity_compat_shim__"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == labShimArg {
		os.Exit(shim.Main(os.Args[2:]))
	}
	if filepath.Base(os.Args[0]) == "srun" {
		os.Exit(userverbs.RunIn(context.Background(), realWorld(), os.Args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func realWorld() userverbs.World {
	return userverbs.World{Now: time.Now, Loc: time.Local, Getenv: os.Getenv, Environ: os.Environ, Getwd: os.Getwd,
		Hostname: os.Hostname, Stdin: os.Stdin}
}

// labSide runs the verbs in this process against a lab, as root, with a
// PATH whose srun is Parity's.
type labSide struct {
	addr, token, path string
	// parity is a built cmd/parity that runs the verbs living there
	// (sacct as parity acct); "" when the test needs none.
	parity string
}

func (l labSide) Run(ctx context.Context, dir string, env map[string]string, argv ...string) (string, string, int) {
	vars := map[string]string{"USER": "root", "HOME": "/root", "PATH": l.path, clientenv.EnvController: l.addr, clientenv.EnvToken: l.token}
	for k, v := range env {
		vars[k] = v
	}
	if argv[0] == "sacct" && l.parity != "" {
		return runParity(ctx, dir, vars, l.parity, append([]string{"acct"}, argv[1:]...))
	}
	w := realWorld()
	w.Getenv = func(k string) string { return vars[k] }
	w.Environ = func() []string {
		out := make([]string, 0, len(vars))
		for k, v := range vars {
			out = append(out, k+"="+v)
		}
		slices.Sort(out)
		return out
	}
	w.Getwd = func() (string, error) { return dir, nil }
	var out, errb strings.Builder
	code := userverbs.RunIn(ctx, w, argv, &out, &errb)
	return out.String(), errb.String(), code
}

// TestEnvCorpus runs the recorded env cases (testdata/envcorpus.jsonl:
// batch jobs and salloc sessions, each with an srun step, that Slurm
// 22.05 ran on the anchor, with the SLURM_* variables each saw) on a lab of the anchor's nodes and compares them
// variable by variable. It needs root (lab agents run jobs as their
// owner).
func TestEnvCorpus(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: lab agents need root to run jobs")
	}
	cases, err := LoadEnv(EnvCorpusPath)
	if err != nil {
		t.Fatal(err)
	}
	side, dir := startAnchorLab(t, true)
	ctx := context.Background()
	table := NewTable()
	only, err := regexp.Compile(*envCases)
	if err != nil {
		t.Fatalf("-env-cases: %v", err)
	}
	for _, ec := range cases {
		if !only.MatchString(ec.ID) {
			continue
		}
		a, err := RunEnv(ctx, side, filepath.Join(dir, "cases"), ec)
		if err != nil {
			t.Fatal(err)
		}
		before := len(table.Mismatches)
		table.AddEnv(ec.ID, ec.Slurm, a)
		if out, err := os.ReadFile(filepath.Join(a.Dir, "out.txt")); err == nil && len(table.Mismatches) > before && len(out) > 0 {
			t.Logf("%s: %s", ec.ID, out) // what srun said, to tell why
		}
	}
	if *envCases != "" {
		t.Log("-env-cases ran a subset: floors not checked")
		var b strings.Builder
		table.Write(&b)
		t.Log("\n" + b.String())
		for _, m := range table.Mismatches {
			t.Log(m)
		}
		return
	}
	var b strings.Builder
	table.Write(&b)
	t.Log("\n" + b.String())
	diffs, err := LoadDifferences(EnvDifferencesPath)
	if err != nil {
		t.Fatal(err)
	}
	unexplained, explained, stale := table.Explain(diffs)
	for _, m := range explained {
		t.Log(m)
	}
	for _, m := range unexplained {
		t.Errorf("undocumented: %s", m)
	}
	for _, k := range stale {
		t.Errorf("%s lists %s, which no longer differs", EnvDifferencesPath, k)
	}
	if *writeEnvFloors {
		if err := table.WriteFloors(EnvFloorsPath); err != nil {
			t.Fatal(err)
		}
		return
	}
	floors, err := LoadFloors(EnvFloorsPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range table.Shortfalls(floors) {
		t.Error(s)
	}
}

// writeEnvFloors rewrites the env floors from this run (say why in the
// commit): go test ./cmd/internal/compat -run TestEnvCorpus -args -write-env-floors
var writeEnvFloors = flag.Bool("write-env-floors", false, "write the env agreement reached as "+EnvFloorsPath)

// envCases runs only the env cases whose id matches (a regexp), to look
// at a few: go test ./cmd/internal/compat -run TestEnvCorpus -v -args -env-cases 'e01[0-3]'
var envCases = flag.String("env-cases", "", "run only the env cases whose id matches this regexp (no floors)")

// EnvFloorsPath holds, per variable not yet agreeing on every env case,
// how many cases must agree at least.
const EnvFloorsPath = "testdata/envfloors.txt"
