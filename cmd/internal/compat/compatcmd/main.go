// Command compatcmd is `make compat` and `make compat-record`: it
// generates sbatch cases and compares, field by field, what the real
// Slurm (the anchor) and a Parity lab of the same shape accept and print;
// with -record it writes Slurm's answers to the committed corpus instead.
// Without a Slurm it compares the corpus's recorded answers.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/parityhpc/parity/cmd/internal/compat"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type flags struct {
	record, recorded bool
	n                int
	seed             uint64
	conf, anchor     string
	corpus, work     string
	floors           string
	differences      string
	envRecord        bool
	envN             int
	mismatches, only int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f flags
	fs := flag.NewFlagSet("compat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&f.record, "record", false, "record Slurm's answers into the corpus (needs Slurm)")
	fs.BoolVar(&f.recorded, "recorded", false, "compare the corpus's recorded answers even when a Slurm answers")
	fs.IntVar(&f.n, "n", 2400, "cases to generate")
	fs.Uint64Var(&f.seed, "seed", 1, "generator seed")
	fs.StringVar(&f.conf, "conf", "/tmp/sa/slurm.conf", "SLURM_CONF of the Slurm to compare with")
	fs.StringVar(&f.anchor, "anchor", "", "slurm-anchor directory: start Slurm with its up.sh when none answers")
	fs.StringVar(&f.corpus, "corpus", "cmd/internal/compat/"+compat.CorpusPath, "the corpus file")
	fs.StringVar(&f.work, "work", "", "directory for the cases' scripts (default: a temporary one)")
	fs.IntVar(&f.mismatches, "mismatches", 40, "mismatches to list")
	fs.StringVar(&f.floors, "write-floors", "", "write the agreement reached as the floors file go test holds Parity to")
	fs.BoolVar(&f.envRecord, "env-record", false, "run the env cases (SLURM_* in a job and a step) on Slurm and record them (needs Slurm)")
	fs.IntVar(&f.envN, "env-n", 80, "env cases to generate")
	fs.StringVar(&f.differences, "differences", "cmd/internal/compat/"+compat.DifferencesPath, "the documented differences")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := do(ctx, f, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "compat:", err)
		return 1
	}
	return 0
}

func do(ctx context.Context, f flags, stdout, stderr io.Writer) error {
	work := f.work
	if work == "" {
		d, err := os.MkdirTemp("", "compat-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		work = d
	}
	slurm, live := compat.Slurm{}, false
	if !f.recorded {
		slurm, live = slurmSide(ctx, f, stderr)
	}
	if f.envRecord {
		if !live {
			return fmt.Errorf("-env-record needs a Slurm: none answers at %s", f.conf)
		}
		return recordEnv(ctx, slurm, f, filepath.Join(work, "slurm-env"), stderr)
	}
	var cases []compat.Case
	switch {
	case live:
		cases = compat.Generate(f.seed, f.n)
		if err := recordAll(ctx, slurm, filepath.Join(work, "slurm"), cases, stderr); err != nil {
			return err
		}
		if f.record {
			return compat.Save(f.corpus, cases)
		}
	case f.record:
		return fmt.Errorf("-record needs a Slurm: none answers at %s", f.conf)
	default:
		if !f.recorded {
			fmt.Fprintf(stderr, "compat: no Slurm answers at %s; comparing the recorded corpus %s\n", f.conf, f.corpus)
		}
		var err error
		if cases, err = compat.Load(f.corpus); err != nil {
			return err
		}
	}
	p, err := compat.StartParity(ctx, filepath.Join(work, "parity-state"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer p.Close()
	t, err := compat.Compare(ctx, p, filepath.Join(work, "parity"), cases, 8)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d cases\n", len(cases))
	t.Write(stdout)
	if f.floors != "" {
		if err := t.WriteFloors(f.floors); err != nil {
			return err
		}
	}
	return writeMismatches(stdout, t, f)
}

// writeMismatches lists the mismatches no documented difference explains
// (up to f.mismatches), then the documented ones with why, then listed
// differences that no longer differ.
func writeMismatches(w io.Writer, t *compat.Table, f flags) error {
	diffs, err := compat.LoadDifferences(f.differences)
	if err != nil {
		return err
	}
	unexplained, explained, stale := t.Explain(diffs)
	same, of := t.Identical()
	fmt.Fprintf(w, "%d cases identical, %d more differ only as documented (%s), %d mismatches not documented\n",
		same, of-same-casesOf(unexplained), f.differences, len(unexplained))
	for i, m := range unexplained {
		if i == f.mismatches {
			fmt.Fprintf(w, "... %d more mismatches\n", len(unexplained)-i)
			break
		}
		fmt.Fprintln(w, m)
	}
	for _, e := range explained {
		fmt.Fprintln(w, e)
	}
	for _, k := range stale {
		fmt.Fprintf(w, "listed as a difference but no longer differs: %s\n", k)
	}
	return nil
}

// casesOf counts the cases among ms.
func casesOf(ms []compat.Mismatch) int {
	seen := map[string]bool{}
	for _, m := range ms {
		seen[m.Case] = true
	}
	return len(seen)
}

// slurmSide finds a Slurm that answers at f.conf, starting the anchor's
// when asked to and none does.
func slurmSide(ctx context.Context, f flags, stderr io.Writer) (compat.Slurm, bool) {
	s := compat.Slurm{Conf: f.conf}
	if answers(ctx, s) {
		return s, true
	}
	if f.anchor == "" {
		return s, false
	}
	fmt.Fprintf(stderr, "compat: starting Slurm with %s/up.sh\n", f.anchor)
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(f.anchor, "up.sh"), filepath.Dir(f.conf))
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(stderr, "compat: up.sh:", err)
		return s, false
	}
	return s, answers(ctx, s)
}

func answers(ctx context.Context, s compat.Slurm) bool {
	if _, err := os.Stat(s.Conf); err != nil {
		return false
	}
	if _, err := exec.LookPath("sinfo"); err != nil {
		return false
	}
	_, _, code := s.Run(ctx, os.TempDir(), nil, "sinfo", "-h", "-o", "%T")
	return code == 0
}

// recordAll runs every case on Slurm and keeps its answer in the case.
func recordAll(ctx context.Context, s compat.Side, base string, cases []compat.Case, stderr io.Writer) error {
	prev, err := compat.Prev(ctx, s, filepath.Join(base, "prev"))
	if err != nil {
		return err
	}
	defer s.Run(ctx, base, nil, "scancel", prev)
	for i := range cases {
		a, err := compat.Run(ctx, s, base, prev, cases[i])
		if err != nil {
			return err
		}
		cases[i].Slurm = a
		if (i+1)%200 == 0 {
			fmt.Fprintf(stderr, "compat: slurm: %d of %d\n", i+1, len(cases))
		}
	}
	return nil
}

// recordEnv runs every env case on Slurm, one job after another, and
// writes the env corpus beside the sbatch one.
func recordEnv(ctx context.Context, s compat.Side, f flags, base string, stderr io.Writer) error {
	cases := compat.GenerateEnv(f.seed, f.envN)
	for i := range cases {
		a, err := compat.RunEnv(ctx, s, base, cases[i])
		if err != nil {
			return err
		}
		cases[i].Slurm = a
		if (i+1)%20 == 0 {
			fmt.Fprintf(stderr, "compat: slurm env: %d of %d\n", i+1, len(cases))
		}
	}
	return compat.SaveEnv(filepath.Join(filepath.Dir(f.corpus), filepath.Base(compat.EnvCorpusPath)), cases)
}
