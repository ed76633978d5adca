// Command parity-lite is the user verbs of parity alone (submit, queue,
// nodes, show, cancel, update, hold, release, requeue, explain, prio,
// events, scontrol) and their Slurm names (sbatch, squeue, sinfo, scancel,
// scontrol, sprio). It links only the client side, so a process per call
// (how pipelines drive sbatch) starts several times faster than the
// multi-call parity binary, which also links the controller, agents, labs
// and conformance suite. `parity install-compat` links the Slurm names to
// it when it sits beside parity. Any other verb is handed to the parity
// binary beside it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/userverbs"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// fullName is the multi-call binary that serves every other verb;
// leanName is this one's.
const (
	fullName = "parity"
	leanName = "parity-lite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr, fallback{find: fullBeside, exec: execFull})
	stop()
	os.Exit(code)
}

// fallback hands verbs parity-lite lacks to the full binary: find locates
// it ("" when absent), exec replaces this process with it (returning only
// on failure).
type fallback struct {
	find func() string
	exec func(path string, argv []string) error
}

func execFull(path string, argv []string) error {
	return syscall.Exec(path, argv, os.Environ())
}

func run(ctx context.Context, argv []string, stdout, stderr io.Writer, fb fallback) int {
	if userverbs.SlurmVersion(argv, userverbs.SlurmVerb, stdout, version) {
		return 0
	}
	root := newRootCmd(stdout, stderr)
	args := userverbs.Invoked(root, argv, userverbs.SlurmVerb)
	if len(argv) > 0 && !ownCall(root, argv[0], args) {
		if full := fb.find(); full != "" {
			// Only returns on failure; then say so and serve what we can.
			err := fb.exec(full, argv)
			fmt.Fprintf(stderr, "parity: hand %q to %s: %v\n", args[0], full, err)
		}
	}
	return userverbs.Execute(ctx, root, args, stderr)
}

// ownCall reports whether parity-lite serves this call: it was invoked as
// parity-lite or a user verb's Slurm name, and args name none of the
// full binary's verbs. Under any other name (sacct, sshare, sreport linked
// here by hand) the call goes to parity, which knows every name.
func ownCall(root *cobra.Command, argv0 string, args []string) bool {
	base := filepath.Base(argv0)
	if _, ok := userverbs.SlurmVerb(base); ok {
		return true
	}
	return base == leanName && (len(args) == 0 || serves(root, args[0]))
}

// serves reports whether word is one of our verbs or a root flag (so
// "parity-lite --help" stays here).
func serves(root *cobra.Command, word string) bool {
	if len(word) > 0 && word[0] == '-' {
		return true
	}
	for _, c := range root.Commands() {
		if c.Name() == word || c.HasAlias(word) {
			return true
		}
	}
	return word == "help" || word == "completion"
}

// fullBeside returns the parity binary in this executable's directory, or
// "" when there is none.
func fullBeside() string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	p := filepath.Join(filepath.Dir(self), fullName)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return ""
	}
	return p
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "parity-lite",
		Short: "Parity's user verbs (submit, queue, cancel, ...) alone, for fast starts; Slurm names when invoked under them",
		Long: `parity-lite serves the verbs people run against a controller (submit, queue,
nodes, show, cancel, update, hold, release, requeue, explain, prio, events)
and, invoked as sbatch, squeue, sinfo, scancel, scontrol or sprio, behaves
as that Slurm command. It is the same code as those verbs in parity, linked
without the daemons, labs and conformance suite so that it starts fast.
Other verbs are handed to the parity binary beside it.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(userverbs.Commands()...)
	return root
}
