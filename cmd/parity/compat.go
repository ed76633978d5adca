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
)

// slurmCommands maps each Slurm command name to the Parity verb that
// serves it when the binary is invoked under that name.
var slurmCommands = map[string]string{
	"sbatch":   "submit",
	"squeue":   "queue",
	"sinfo":    "nodes",
	"scancel":  "cancel",
	"scontrol": "scontrol",
	"sprio":    "prio",
	"sacct":    "acct",
	"sshare":   "share",
	"sreport":  "report",
}

// slurmCompatVerb maps the name the binary was invoked as (argv[0]'s base
// name, e.g. "sbatch") to the Parity verb that serves it.
func slurmCompatVerb(name string) (string, bool) {
	v, ok := slurmCommands[name]
	return v, ok
}

// slurmCommandNames lists the Slurm names install-compat links, sorted.
func slurmCommandNames() []string {
	names := make([]string, 0, len(slurmCommands))
	for n := range slurmCommands {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// compatArgs turns argv into the arguments of the root command: under a
// Slurm name, "sbatch x.sh" becomes "submit x.sh"; otherwise argv[0] is
// dropped.
func compatArgs(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	if verb, ok := slurmCompatVerb(filepath.Base(argv[0])); ok {
		return append([]string{verb}, argv[1:]...)
	}
	return argv[1:]
}

func newInstallCompatCmd() *cobra.Command {
	var hard, force bool
	cmd := &cobra.Command{
		Use:   "install-compat DIR",
		Short: "Link sbatch, squeue, scancel, sinfo, scontrol, sprio, sacct, sshare and sreport to this binary",
		Long: `Create, in DIR, a link named after each Slurm command to this binary, so
existing scripts, wrappers and habits keep working: invoked as sbatch it
behaves as sbatch (parity submit), as squeue as parity queue, and so on.
Links are symbolic unless --hard. An existing file is left alone (and
reported) unless --force; a link that already points here is kept.`,
		Args: argsBetween(1, 1, "the directory to put the links in"),
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("install-compat: find this binary: %w", err)
			}
			if resolved, err := filepath.EvalSymlinks(self); err == nil {
				self = resolved
			}
			return installCompat(cmd, args[0], self, hard, force)
		},
	}
	cmd.Flags().BoolVar(&hard, "hard", false, "hard links instead of symbolic links")
	cmd.Flags().BoolVar(&force, "force", false, "replace existing files")
	return cmd
}

func installCompat(cmd *cobra.Command, dir, self string, hard, force bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install-compat: %w", err)
	}
	var failed []string
	for _, name := range slurmCommandNames() {
		path := filepath.Join(dir, name)
		if same(path, self) {
			fmt.Fprintf(cmd.OutOrStdout(), "%s -> %s (already there)\n", path, self)
			continue
		}
		if _, err := os.Lstat(path); err == nil {
			if !force {
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
		if err := link(self, path); err != nil {
			return fmt.Errorf("install-compat: %w", err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s -> %s\n", path, self)
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

// scontrolArgs is a parsed scontrol command line: options (accepted
// anywhere), the command word and its arguments.
type scontrolArgs struct {
	client  clientFlags
	show    showFlags
	help    bool
	command string
	args    []string
}

// parseScontrol reads scontrol's command line.
func parseScontrol(words []string) (scontrolArgs, error) {
	var a scontrolArgs
	var rest []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, value, attached := strings.Cut(w, "=")
		switch {
		case w == "--oneliner":
			a.show.oneLiner = true
		case w == "--details":
			a.show.details = true
		case w == "--json":
			a.client.json = true
		case w == "--help" || w == "--usage":
			a.help = true
		case w == "--quiet" || w == "--verbose":
		case name == "--controller" || name == "--token":
			if !attached {
				if i+1 >= len(words) {
					return a, fmt.Errorf("%s requires a value", name)
				}
				i++
				value = words[i]
			}
			if name == "--controller" {
				a.client.controller = value
			} else {
				a.client.token = value
			}
		case len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.Trim(w[1:], "odhQv") == "":
			a.show.oneLiner = a.show.oneLiner || strings.Contains(w, "o")
			a.show.details = a.show.details || strings.Contains(w, "d")
			a.help = a.help || strings.Contains(w, "h")
		case strings.HasPrefix(w, "-") && len(rest) == 0:
			return a, fmt.Errorf("unknown option %s", w)
		default:
			rest = append(rest, w)
		}
	}
	if len(rest) > 0 {
		a.command, a.args = strings.ToLower(rest[0]), rest[1:]
	}
	return a, nil
}

func newScontrolCmd() *cobra.Command { return newScontrolCmdWith(realUserEnv()) }

func newScontrolCmdWith(env userEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "scontrol [-o] [-d] [--json] COMMAND ...",
		Short: "Slurm's scontrol: show, update, hold, release, requeue",
		Long: `Behave as scontrol for the commands Parity serves:
  show job|node|partition|reservation [ID]   (parity show)
  show hostnames EXPR | hostlist A,B
  update JobId=ID KEY=VALUE...      (parity update)
  update NodeName=NODES State=DRAIN|RESUME|DOWN Reason=TEXT
  hold|uhold|release JOBID...       (parity hold, release)
  requeue|requeuehold JOBID...      (parity requeue [--hold])
  suspend|resume JOBID...           (parity suspend, resume)
  create reservation KEY=VALUE...   (parity reservation create)
  update ReservationName=NAME KEY=VALUE...
  delete ReservationName=NAME
-o prints one line per record, -d adds details.`,
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, words []string) error {
			a, err := parseScontrol(words)
			if err != nil {
				return usageError("scontrol", "%v", err)
			}
			if a.help || a.command == "" {
				return cmd.Help()
			}
			return dispatchScontrol(cmd, env, a)
		},
	}
}

func dispatchScontrol(cmd *cobra.Command, env userEnv, a scontrolArgs) error {
	ids := func() []string {
		out := make([]string, len(a.args))
		for i, w := range a.args {
			if k, v, ok := strings.Cut(w, "="); ok && strings.EqualFold(k, "jobid") {
				w = v
			}
			out[i] = w
		}
		return out
	}
	need := func(n int) error {
		if len(a.args) < n {
			return usageError("scontrol", "%s: missing arguments", a.command)
		}
		return nil
	}
	switch a.command {
	case "show":
		if err := need(1); err != nil {
			return err
		}
		if len(a.args) > 2 {
			return usageError("scontrol", "show: too many arguments %q", a.args[2:])
		}
		return runShow(cmd, env, &a.client, a.show, "scontrol", a.args)
	case "update":
		if err := need(1); err != nil {
			return err
		}
		if slices.ContainsFunc(a.args, func(w string) bool { k, _, _ := strings.Cut(w, "="); return isResvNameKey(strings.ToLower(k)) }) {
			return runReservation(cmd, env, &a.client, a.show, "scontrol", "update", a.args)
		}
		return runUpdate(cmd, env, &a.client, "scontrol", a.args)
	case "create":
		if err := need(1); err != nil {
			return err
		}
		words := a.args
		if isResvEntity(words[0]) {
			words = words[1:]
		} else if k, _, _ := strings.Cut(words[0], "="); !isResvNameKey(strings.ToLower(k)) {
			return usageError("scontrol", "create: Parity creates reservations only (scontrol create reservation KEY=VALUE...), not %q", words[0])
		}
		return runReservation(cmd, env, &a.client, a.show, "scontrol", "create", words)
	case "delete":
		if err := need(1); err != nil {
			return err
		}
		words := a.args
		if len(words) == 2 && isResvEntity(words[0]) {
			words = words[1:]
		}
		if k, _, ok := strings.Cut(words[0], "="); ok && !isResvNameKey(strings.ToLower(k)) {
			return usageError("scontrol", "delete: Parity deletes reservations only (scontrol delete ReservationName=NAME), not %q", words[0])
		}
		return runReservation(cmd, env, &a.client, a.show, "scontrol", "delete", words)
	case "hold", "uhold":
		return scontrolJobs(cmd, env, a, need, ids(), func(bool) jobAction { return holdAction })
	case "release":
		return scontrolJobs(cmd, env, a, need, ids(), func(bool) jobAction { return releaseAction })
	case "requeue", "requeuehold":
		return scontrolJobs(cmd, env, a, need, ids(), requeueAction)
	case "suspend":
		return scontrolJobs(cmd, env, a, need, ids(), func(bool) jobAction { return suspendAction })
	case "resume":
		return scontrolJobs(cmd, env, a, need, ids(), func(bool) jobAction { return resumeAction })
	}
	return usageError("scontrol", "invalid keyword: %s (Parity serves show, update, create, delete, hold, uhold, release, requeue, requeuehold, suspend, resume)", a.command)
}

// isResvEntity reports whether an scontrol entity word names reservations.
func isResvEntity(w string) bool {
	switch strings.ToLower(w) {
	case "reservation", "reservations", "res", "resv":
		return true
	}
	return false
}

func scontrolJobs(cmd *cobra.Command, env userEnv, a scontrolArgs, need func(int) error, ids []string, act func(bool) jobAction) error {
	if err := need(1); err != nil {
		return err
	}
	return runJobAction(cmd, env, &a.client, "scontrol", ids, act(a.command == "requeuehold"))
}
