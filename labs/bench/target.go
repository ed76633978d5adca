package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// target is one scheduler under test, driven through its command line
// (submissions) and whatever reads its state most cheaply.
type target interface {
	// name is "parity" or "slurm".
	name() string
	// submit runs one submission process with sbatch options and returns
	// the job id it printed (--parsable).
	submit(ctx context.Context, args ...string) (string, error)
	// submitBulk queues one backlog job by the side's fastest path
	// (Parity: its API from this process; Slurm: sbatch, it has no other
	// here); how is in bulkHow.
	submitBulk(ctx context.Context, args ...string) (string, error)
	bulkHow() string
	// active counts pending, running and completing jobs (array holders
	// included); only zero versus non-zero must be exact.
	active(ctx context.Context) (int, error)
	// running reports whether job id runs.
	running(ctx context.Context, id string) (bool, error)
	// cancel cancels job id.
	cancel(ctx context.Context, id string) error
	// passWindow starts measuring scheduling passes; the returned function
	// ends the window and returns what happened in it.
	passWindow(ctx context.Context) (func(context.Context) (PassStats, error), error)
}

// PassStats describe the scheduling passes of a measurement window.
type PassStats struct {
	// Passes is how many passes ran in the window.
	Passes int `json:"passes"`
	// Mean is the mean pass duration in the window.
	Mean time.Duration `json:"mean_ns"`
	// Last is the duration of the last pass, at the deepest queue.
	Last time.Duration `json:"last_ns"`
	// Note says what was measured, in the scheduler's own terms.
	Note string `json:"note"`
}

// runCmd runs argv with env added, returning trimmed stdout, or an error
// carrying stderr.
func runCmd(ctx context.Context, env []string, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(cmd.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// parsableID takes the job id from `--parsable` output ("id" or "id;cluster").
func parsableID(out string) (string, error) {
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if id == "" || strings.ContainsAny(id, " \n\t") {
		return "", fmt.Errorf("bench: submit printed %q, want a job id", out)
	}
	return id, nil
}
