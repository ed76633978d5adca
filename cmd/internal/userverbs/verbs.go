package userverbs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/sbatch"
	"github.com/parityhpc/parity/scheduler/client/format"
)

// Commands returns the user verbs, built on the real process environment.
func Commands() []*cobra.Command { return commandsWith(realUserEnv()) }

func commandsWith(env userEnv) []*cobra.Command {
	return []*cobra.Command{
		newSubmitCmdWith(env), newQueueCmdWith(env), newNodesCmdWith(env), newShowCmdWith(env),
		newCancelCmdWith(env), newUpdateCmdWith(env), newHoldCmdWith(env), newReleaseCmdWith(env),
		newRequeueCmdWith(env), newExplainCmdWith(env), newPrioCmdWith(env), newEventsCmdWith(env),
		newScontrolCmdWith(env), newReservationCmdWith(env), newSuspendCmdWith(env), newResumeCmdWith(env),
		newSrunCmdWith(env), newSallocCmdWith(env), newAcctmgrCmdWith(env),
	}
}

// exitError carries a specific exit status out of a command.
type exitError struct {
	code int
	err  error
	// slurmText, when set, is the whole line a Slurm-named command prints
	// instead (Slurm prints some errors bare: "slurm_load_jobs error: ...").
	slurmText string
	// printed: the command already said why (sacctmgr prints its
	// refusals itself), so Execute adds nothing.
	printed bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode is the process exit status the error asks for.
func (e *exitError) ExitCode() int { return e.code }

// ExitCoder is an error that asks for a specific exit status.
type ExitCoder interface {
	error
	ExitCode() int
}

// Execute runs root with args (argv without the program name, already
// mapped by Invoked or CompatArgs), prints an error on stderr in the
// command's voice ("parity: <error>", or "sbatch: error: ..." invoked as
// sbatch) and returns the process exit status: the one an ExitCoder in
// the error chain asks for, else 1.
func Execute(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if cmd == nil {
		cmd = root
	}
	v := voiceOf(cmd)
	var ee *exitError
	switch {
	case errors.As(err, &ee) && ee.printed:
	case v.Slurm != "" && errors.As(err, &ee) && ee.slurmText != "":
		fmt.Fprintln(stderr, ee.slurmText)
	default:
		fmt.Fprintln(stderr, v.Error(cmd.Name(), err))
	}
	var ec ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

// ArgsBetween checks a verb's positional argument count, reporting it as
// "<verb>: want <what> (see --help)" like every other usage error.
func ArgsBetween(lo, hi int, what string) cobra.PositionalArgs { return argsBetween(lo, hi, what) }

// slurmNameKey is the root command's annotation naming the Slurm command
// the binary was invoked as.
const slurmNameKey = "parity.slurm-name"

// Invoked prepares root for argv: under a Slurm name verbOf knows, its
// messages take that command's voice. It returns the root's arguments
// (CompatArgs).
func Invoked(root *cobra.Command, argv []string, verbOf func(string) (string, bool)) []string {
	if len(argv) > 0 {
		if name := filepath.Base(argv[0]); name != "" {
			if _, ok := verbOf(name); ok {
				if root.Annotations == nil {
					root.Annotations = map[string]string{}
				}
				root.Annotations[slurmNameKey] = name
			}
		}
	}
	return CompatArgs(argv, verbOf)
}

// voiceOf is the voice cmd's messages take (see Invoked).
// warnLayout names on stderr, in the command's voice, each -O field the
// layout left out, as squeue and sinfo do before printing the rest.
func warnLayout(cmd *cobra.Command, l format.Layout) {
	for _, w := range l.Warnings() {
		fmt.Fprintln(cmd.ErrOrStderr(), voiceOf(cmd).Error(cmd.Name(), errors.New(w)))
	}
}

func voiceOf(cmd *cobra.Command) sbatch.Voice {
	return sbatch.Voice{Slurm: cmd.Root().Annotations[slurmNameKey]}
}
