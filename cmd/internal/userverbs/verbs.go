package userverbs

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Commands returns the user verbs, built on the real process environment.
func Commands() []*cobra.Command { return commandsWith(realUserEnv()) }

func commandsWith(env userEnv) []*cobra.Command {
	return []*cobra.Command{
		newSubmitCmdWith(env), newQueueCmdWith(env), newNodesCmdWith(env), newShowCmdWith(env),
		newCancelCmdWith(env), newUpdateCmdWith(env), newHoldCmdWith(env), newReleaseCmdWith(env),
		newRequeueCmdWith(env), newExplainCmdWith(env), newPrioCmdWith(env), newEventsCmdWith(env),
		newScontrolCmdWith(env), newReservationCmdWith(env), newSuspendCmdWith(env), newResumeCmdWith(env),
		newSrunCmdWith(env), newSallocCmdWith(env),
	}
}

// exitError carries a specific exit status out of a command.
type exitError struct {
	code int
	err  error
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
// mapped by CompatArgs), prints an error as "parity: <error>" on stderr
// and returns the process exit status: the one an ExitCoder in the error
// chain asks for, else 1.
func Execute(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "parity:", err)
	var ec ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

// ArgsBetween checks a verb's positional argument count, reporting it as
// "<verb>: want <what> (see --help)" like every other usage error.
func ArgsBetween(lo, hi int, what string) cobra.PositionalArgs { return argsBetween(lo, hi, what) }
