package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/userverbs"
)

// accountingCommands maps the Slurm names that read the accounting ledger
// to their verbs. Only this binary serves them; the user verbs' names
// come from userverbs, which parity-lite links too.
func accountingCommand(name string) (string, bool) {
	switch name {
	case "sacct":
		return "acct", true
	case "sshare":
		return "share", true
	case "sreport":
		return "report", true
	}
	return "", false
}

// slurmCompatVerb maps the name the binary was invoked as (argv[0]'s base
// name, e.g. "sbatch") to the Parity verb that serves it.
func slurmCompatVerb(name string) (string, bool) {
	if v, ok := userverbs.SlurmVerb(name); ok {
		return v, true
	}
	return accountingCommand(name)
}

// slurmCommandNames lists the Slurm names install-compat links, sorted.
func slurmCommandNames() []string {
	names := append(userverbs.SlurmNames(), "sacct", "sreport", "sshare")
	slices.Sort(names)
	return names
}

// leanName is the lean user-verb binary install-compat prefers for the
// user verbs' Slurm names when it sits beside this one; sbatchName is the
// leaner still sbatch alone (no gRPC), preferred for sbatch.
const (
	leanName   = "parity-lite"
	sbatchName = "parity-sbatch"
)

func newInstallCompatCmd() *cobra.Command {
	var hard, force bool
	cmd := &cobra.Command{
		Use:   "install-compat DIR",
		Short: "Link sbatch, squeue, scancel, sinfo, scontrol, sprio, sacctmgr, sacct, sshare and sreport to this binary",
		Long: `Create, in DIR, a link named after each Slurm command to this binary, so
existing scripts, wrappers and habits keep working: invoked as sbatch it
behaves as sbatch (parity submit), as squeue as parity queue, and so on.
When parity-lite (the user verbs alone, which start several times faster)
sits beside this binary, sbatch, squeue, sinfo, scancel, scontrol, sprio and sacctmgr
link to it instead; sbatch links to parity-sbatch (sbatch alone, over the
controller's HTTP endpoint, faster still) when that sits beside this binary.
sacct, sshare and sreport always link here.
Links are symbolic unless --hard. An existing file is left alone (and
reported) unless --force; a link to this binary, parity-lite or
parity-sbatch is updated in place.`,
		Args: userverbs.ArgsBetween(1, 1, "the directory to put the links in"),
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("install-compat: find this binary: %w", err)
			}
			if resolved, err := filepath.EvalSymlinks(self); err == nil {
				self = resolved
			}
			return installCompat(cmd, args[0], targetsOf(self), hard, force)
		},
	}
	cmd.Flags().BoolVar(&hard, "hard", false, "hard links instead of symbolic links")
	cmd.Flags().BoolVar(&force, "force", false, "replace existing files")
	return cmd
}

// leanBeside returns the parity-lite executable in self's directory, or
// "" when there is none.
func leanBeside(self string) string { return exeBeside(self, leanName) }

// sbatchBeside returns the parity-sbatch executable in self's directory,
// or "" when there is none.
func sbatchBeside(self string) string { return exeBeside(self, sbatchName) }

func exeBeside(self, name string) string {
	p := filepath.Join(filepath.Dir(self), name)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return ""
	}
	return p
}

// linkTargets are the binaries install-compat links to: self (this
// binary), lean (parity-lite) and sbatch (parity-sbatch), "" when absent.
type linkTargets struct{ self, lean, sbatch string }

// targetsOf finds the lean binaries beside self.
func targetsOf(self string) linkTargets {
	return linkTargets{self: self, lean: leanBeside(self), sbatch: sbatchBeside(self)}
}

// of returns the binary the Slurm name should run.
func (t linkTargets) of(name string) string {
	if name == "sbatch" && t.sbatch != "" {
		return t.sbatch
	}
	if _, ok := userverbs.SlurmVerb(name); ok && t.lean != "" {
		return t.lean
	}
	return t.self
}

// ours reports whether path is one of the binaries (so replacing it
// switches between them, as when parity-lite is installed later).
func (t linkTargets) ours(path string) bool {
	return same(path, t.self) || (t.lean != "" && same(path, t.lean)) || (t.sbatch != "" && same(path, t.sbatch))
}

func installCompat(cmd *cobra.Command, dir string, t linkTargets, hard, force bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install-compat: %w", err)
	}
	var failed []string
	for _, name := range slurmCommandNames() {
		path, target := filepath.Join(dir, name), t.of(name)
		if same(path, target) {
			fmt.Fprintf(cmd.OutOrStdout(), "%s -> %s (already there)\n", path, target)
			continue
		}
		if _, err := os.Lstat(path); err == nil {
			if !force && !t.ours(path) {
				fmt.Fprintf(cmd.ErrOrStderr(), "parity: install-compat: %s exists (use --force to replace it)\n", path)
				failed = append(failed, name)
				continue
			}
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("install-compat: %w", err)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("install-compat: %w", err)
		}
		link := os.Symlink
		if hard {
			link = os.Link
		}
		if err := link(target, path); err != nil {
			return fmt.Errorf("install-compat: %w", err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s -> %s\n", path, target)
	}
	if len(failed) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("install-compat: not linked: %s", strings.Join(failed, ", "))}
	}
	return nil
}

// same reports whether path already is self (a symlink to it or a hard link).
func same(path, self string) bool {
	a, err := os.Stat(path)
	if err != nil {
		return false
	}
	b, err := os.Stat(self)
	return err == nil && os.SameFile(a, b)
}
