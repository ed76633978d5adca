// Command parity is Parity's one multi-call binary: daemons, user verbs,
// labs, conformance and simulation. Invoked under a Slurm command name
// (through a symlink) it behaves as that command.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/userverbs"
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

// ExitCode is the process exit status the error asks for.
func (e *exitError) ExitCode() int { return e.code }

// usageError reports bad command-line input for verb, exit status 1.
func usageError(verb, format string, args ...any) error {
	return &exitError{code: 1, err: fmt.Errorf("%s: "+format, append([]any{verb}, args...)...)}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if userverbs.SlurmVersion(args, slurmCompatVerb, stdout, version) {
		return 0
	}
	root := newRootCmd(stdout, stderr)
	return userverbs.Execute(ctx, root, userverbs.Invoked(root, args, slurmCompatVerb), stderr)
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "parity",
		Short: "Parity: a GPU cluster workload manager with the same placement, isolation and accounting on every vendor",
		Long: `Parity schedules batch jobs on GPU clusters behind vendor drivers (in tree:
` + inTreeDriverNames() + `; others as out-of-tree adapters), and proves with
its conformance suite that placement, isolation and accounting behave the
same on every vendor.`,
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
		newSimCmd(), newBenchCmd(), newChaosCmd(),
		newInstallCompatCmd(),
	)
	// The user verbs (submit, queue, ..., scontrol) are shared with parity-lite.
	root.AddCommand(userverbs.Commands()...)
	return root
}
