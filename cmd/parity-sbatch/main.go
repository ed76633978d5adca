// Command parity-sbatch is sbatch (`parity submit`) alone, for pipelines
// that start a process per job: it parses the same options with the same
// code as parity and parity-lite (cmd/internal/sbatch over jobspec) and
// posts the job as JSON to the controller's HTTP endpoint, so it links
// neither gRPC nor protobuf, whose initialisation would cost more than the
// submission. `parity install-compat` links sbatch to it when it sits
// beside parity. Invoked as sbatch every argument is sbatch's; under any
// other name a leading "submit" is dropped, so `parity-sbatch submit ...`
// works as `parity submit ...` does. --wait (which polls the job) and a
// controller that serves TLS (--ca or $PARITY_CA; the lean client speaks
// plain TCP only, crypto/tls alone would cost a few milliseconds a
// process) run parity-lite, else parity, from this binary's directory
// with the same arguments.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/parityhpc/parity/cmd/internal/sbatch"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	// No signal handling: an interrupted submission simply ends, as
	// sbatch's does, and os/signal's goroutine and thread would cost a
	// little on every start (the hand-off installs its own).
	if a := args(os.Args); sbatch.AsksVersion("sbatch", a) {
		fmt.Println(sbatch.VersionLine(version))
		return
	}
	w := waiter{dir: selfDir, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	env := sbatch.RealEnv()
	if filepath.Base(os.Args[0]) == "sbatch" {
		env.Voice = sbatch.Voice{Slurm: "sbatch"} // errors as sbatch words them
	}
	os.Exit(sbatch.Run(context.Background(), args(os.Args), env, os.Stdout, os.Stderr, w.handOff))
}

// args are sbatch's arguments: argv without the program name, and
// without a leading "submit" unless invoked as sbatch.
func args(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	rest := argv[1:]
	if filepath.Base(argv[0]) != "sbatch" && len(rest) > 0 && rest[0] == "submit" {
		rest = rest[1:]
	}
	return rest
}

// waiter runs what the lean sbatch hands off (--wait, TLS) in parity-lite
// or parity from dir, which serve it.
type waiter struct {
	dir            func() (string, error)
	stdin          io.Reader
	stdout, stderr io.Writer
}

// handOff runs `sbatch ARGS` in the first of parity-lite and parity
// found and returns its exit status.
func (w waiter) handOff(ctx context.Context, args []string, req *jobspec.Request) int {
	full, err := w.find("parity-lite", "parity")
	if err != nil {
		fmt.Fprintln(w.stderr, "parity: submit:", err)
		return sbatch.ExitCode(os.Getenv)
	}
	stdin := w.stdin
	if sbatch.FromStdin(req) {
		// The script was read from our standard input already.
		stdin = bytes.NewReader(req.Script)
	}
	return w.run(ctx, full, args, stdin)
}

// run runs path as sbatch with args, passing on SIGINT and SIGTERM
// (sbatch --wait's user may interrupt it), and returns its exit status.
func (w waiter) run(ctx context.Context, path string, args []string, stdin io.Reader) int {
	cmd := exec.Command(path, args...)
	cmd.Args[0] = "sbatch"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, w.stdout, w.stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(w.stderr, "parity: submit: run %s: %v\n", path, err)
		return 1
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			ctx = context.Background() // once
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ee.ExitCode() >= 0 {
					return ee.ExitCode()
				}
				return 1
			}
			if err != nil {
				fmt.Fprintf(w.stderr, "parity: submit: %s: %v\n", path, err)
				return 1
			}
			return 0
		}
	}
}

// find returns the first of names that is an executable file in w's dir.
func (w waiter) find(names ...string) (string, error) {
	dir, err := w.dir()
	if err != nil {
		return "", err
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("--wait and TLS (--ca, $PARITY_CA) need parity-lite or parity in %s", dir)
}

// selfDir is this binary's directory, after following its symlinks (as
// install-compat links sbatch here).
func selfDir() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this binary: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	return filepath.Dir(self), nil
}
