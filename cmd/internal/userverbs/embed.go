package userverbs

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"
)

// World is what an embedded run of the user verbs takes from outside: the
// clock, the zone times print in, the environment, the working directory,
// the host name and standard input. The differential harness runs sbatch
// and scontrol in its own process this way, thousands of times, instead
// of starting a binary per call.
type World struct {
	Now      func() time.Time
	Loc      *time.Location
	Getenv   func(string) string
	Environ  func() []string
	Getwd    func() (string, error)
	Hostname func() (string, error)
	Stdin    io.Reader
}

// RunIn runs argv (argv[0] names the command, "sbatch" or "scontrol", as
// for the binaries) in world, as the binaries' main does, and returns the
// exit status.
func RunIn(ctx context.Context, w World, argv []string, stdout, stderr io.Writer) int {
	env := userEnv{now: w.Now, loc: w.Loc, getenv: w.Getenv, environ: w.Environ, getwd: w.Getwd, hostname: w.Hostname, stdin: w.Stdin}
	root := &cobra.Command{Use: "parity", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(commandsWith(env)...)
	return Execute(ctx, root, Invoked(root, argv, SlurmVerb), stderr)
}
