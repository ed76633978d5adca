package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/labs/bench"
	"github.com/parityhpc/parity/labs/labfile"
)

type labBenchFlags struct {
	sizes       bench.Sizes
	lab, dir    string
	slurm       bool
	anchor      string
	anchorState string
	json        bool
	timeout     time.Duration
	parallel    int
	cpuProfile  string
}

func newLabBenchCmd() *cobra.Command {
	f := labBenchFlags{sizes: bench.DefaultSizes()}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the same workloads on a Parity lab and on Slurm and print figures with ratios",
		Long: `Starts a Parity lab (default slurm-anchor: 4 nodes × 8 H100, in-process
controller and agents, real job launch) and runs, one after the other:
  (a) --submits individual submissions, each a separate ` + "`parity submit`" + ` process
      (sbatch for Slurm), then waits until they have all run;
  (b) one --array task array of 1-GPU ` + "`true`" + ` jobs, submit to last completion;
  (c) a blocker holding every GPU, --backlog mixed GPU jobs (1, 2, 4, 8 and
      2×8 GPUs) submitted behind it, then the drain once it is cancelled;
  (d) the scheduler's pass time over (c)'s queue: Parity's pass-duration
      histogram, Slurm's sdiag "Main schedule statistics" mean cycle.
Then the same on Slurm when --slurm is given, SLURM_CONF is set, or
--slurm-anchor names the slurm-anchor directory whose up.sh starts it (and
whose down.sh stops it afterwards if this run started it, removing the
state directory too if this run made it). Slurm's queue must be empty.
Figures are wall clock: report them with the machine load, which the
table prints, and with the host CPU each workload used (in the notes).`,
		Example: `  sudo parity lab bench --slurm-anchor ../shared/tools/slurm-anchor
  sudo parity lab bench --submits 20 --array 50 --backlog 100 --json
  sudo parity lab bench --submits 0 --backlog 0 --cpuprofile array.prof`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLabBench(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.sizes.Submits, "submits", f.sizes.Submits, "individual submissions for (a); 0 skips it")
	fl.IntVar(&f.sizes.Array, "array", f.sizes.Array, "array tasks for (b); 0 skips it")
	fl.IntVar(&f.sizes.Backlog, "backlog", f.sizes.Backlog, "backlog jobs for (c) and (d); 0 skips them")
	fl.StringVar(&f.lab, "lab", "slurm-anchor", "built-in lab or lab file for the Parity side")
	fl.StringVar(&f.dir, "dir", "", "directory for the lab's state (default: a temporary one, removed after)")
	fl.BoolVar(&f.slurm, "slurm", false, "run the Slurm side against the Slurm that SLURM_CONF names")
	fl.StringVar(&f.anchor, "slurm-anchor", "", "slurm-anchor directory (up.sh, down.sh) to start Slurm from")
	fl.StringVar(&f.anchorState, "slurm-anchor-state", "/tmp/sa", "state directory the anchor's up.sh uses")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Minute, "longest wait for one workload's queue to empty")
	fl.IntVar(&f.parallel, "parallel", 4, "concurrent submissions for the backlog")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (controller and agents) to FILE")
	return cmd
}

func runLabBench(ctx context.Context, stdout, stderr io.Writer, f labBenchFlags) error {
	lab, err := labfile.Resolve(f.lab)
	if err != nil {
		return usageError("lab bench", "--lab %q: %v", f.lab, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab bench: find the parity binary: %w", err)}
	}
	// Users' sbatch is parity-sbatch, else parity-lite, where it is
	// installed beside parity (install-compat links it so), so the
	// submissions run as that (both take `submit ARGS`).
	if t := targetsOf(exe); t.of("sbatch") != exe {
		exe = t.of("sbatch")
	}
	fmt.Fprintf(stderr, "lab bench: submissions run as %s\n", exe)
	dir := f.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "parity-bench-"); err != nil {
			return &exitError{code: 1, err: fmt.Errorf("lab bench: %w", err)}
		}
		defer os.RemoveAll(dir)
	}
	// A previous run's lab (device nodes included) would not rebuild over itself.
	if err := os.RemoveAll(filepath.Join(dir, "lab")); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab bench: %w", err)}
	}
	if err := prepareLabDir(dir); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab bench: %w", err)}
	}
	logf, err := os.Create(filepath.Join(dir, "bench.log"))
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab bench: %w", err)}
	}
	defer logf.Close()
	o := bench.Options{Sizes: f.sizes, Timeout: f.timeout, Parallel: f.parallel, Progress: stderr,
		Parity: bench.ParityOptions{Lab: lab, Dir: filepath.Join(dir, "lab"), Exe: []string{exe},
			Logger: slog.New(slog.NewTextHandler(logf, nil))}}
	switch {
	case f.anchor != "":
		o.Slurm = &bench.SlurmOptions{Anchor: f.anchor, StateDir: f.anchorState}
	case f.slurm || os.Getenv("SLURM_CONF") != "":
		o.Slurm = &bench.SlurmOptions{Conf: os.Getenv("SLURM_CONF")}
	default:
		o.SlurmSkip = "no --slurm, --slurm-anchor or SLURM_CONF"
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return usageError("lab bench", "--cpuprofile %q: %v", f.cpuProfile, err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return &exitError{code: 1, err: fmt.Errorf("lab bench: %w", err)}
		}
		defer pprof.StopCPUProfile()
	}
	res, err := bench.Run(ctx, o)
	if err != nil && res == nil {
		return &exitError{code: 1, err: fmt.Errorf("lab bench: %w", err)}
	}
	if f.json {
		if werr := res.WriteJSON(stdout); werr != nil {
			return werr
		}
	} else if werr := res.WriteTable(stdout); werr != nil {
		return werr
	}
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab bench: %w", err)}
	}
	return nil
}
