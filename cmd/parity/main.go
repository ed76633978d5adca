// Command parity is Parity's one multi-call binary: daemons, user verbs,
// labs, conformance and simulation. Invoked under a Slurm command name
// (through a symlink) it behaves as that command.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exitError carries a specific exit status out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(compatArgs(args))
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "parity:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	return 0
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "parity",
		Short: "Parity: a GPU cluster workload manager with the same placement, isolation and accounting on every vendor",
		Long: `Parity schedules batch jobs on GPU clusters (NVIDIA, AMD and CPU-only nodes)
behind vendor drivers, and proves with its conformance suite that placement,
isolation and accounting behave the same on every vendor.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newDevicesCmd(),
		newControllerCmd(), newConfigCmd(), newTokenCmd(), newAgentCmd(),
		newAcctCmd(), newReportCmd(), newShareCmd(),
		newConformCmd(), newLabCmd(),
		newSimCmd(), newBenchCmd(),
		newSubmitCmd(), newQueueCmd(), newNodesCmd(), newShowCmd(), newCancelCmd(), newUpdateCmd(),
		newHoldCmd(), newReleaseCmd(), newRequeueCmd(), newExplainCmd(), newPrioCmd(), newEventsCmd(),
		newScontrolCmd(), newInstallCompatCmd(),
		newReservationCmd(), newSuspendCmd(), newResumeCmd(),
	)
	return root
}
