package userverbs

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/sbatch"
)

// SlurmVerb maps a Slurm command name the user verbs serve (argv[0]'s
// base name, e.g. "sbatch") to the verb that serves it. Accounting names
// (sacct, sshare, sreport) read the controller's ledger and belong to the
// full binary, which adds them.
func SlurmVerb(name string) (string, bool) {
	switch name {
	case "sbatch":
		return "submit", true
	case "squeue":
		return "queue", true
	case "sinfo":
		return "nodes", true
	case "scancel":
		return "cancel", true
	case "scontrol":
		return "scontrol", true
	case "sacctmgr":
		return "acctmgr", true
	case "sprio":
		return "prio", true
	case "srun":
		return "srun", true
	case "salloc":
		return "salloc", true
	}
	return "", false
}

// SlurmNames lists the Slurm names SlurmVerb serves, sorted.
func SlurmNames() []string {
	return []string{"sacctmgr", "salloc", "sbatch", "scancel", "scontrol", "sinfo", "sprio", "squeue", "srun"}
}

// CompatArgs turns argv into the arguments of the root command: under a
// Slurm name that verbOf knows, "sbatch x.sh" becomes "submit x.sh";
// otherwise argv[0] is dropped.
func CompatArgs(argv []string, verbOf func(string) (string, bool)) []string {
	if len(argv) == 0 {
		return nil
	}
	if verb, ok := verbOf(filepath.Base(argv[0])); ok {
		return append([]string{verb}, argv[1:]...)
	}
	return argv[1:]
}

// SlurmVersion answers "--version" (or -V, or "scontrol version") when
// argv[0] is a Slurm name verbOf knows, printing Slurm's version line with
// Parity's version after it; it reports whether it did.
func SlurmVersion(argv []string, verbOf func(string) (string, bool), out io.Writer, parityVersion string) bool {
	if len(argv) == 0 {
		return false
	}
	name := filepath.Base(argv[0])
	if _, ok := verbOf(name); !ok || !sbatch.AsksVersion(name, argv[1:]) {
		return false
	}
	fmt.Fprintln(out, sbatch.VersionLine(parityVersion))
	return true
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
		case isConnFlag(name):
			if !attached {
				if i+1 >= len(words) {
					return a, fmt.Errorf("%s requires a value", name)
				}
				i++
				value = words[i]
			}
			a.client.setConn(name, value)
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
  create|update PartitionName=NAME KEY=VALUE...   (admins: Nodes, MaxTime,
      DefaultTime, State, AllowAccounts, DenyAccounts, AllowQos, DenyQos,
      PriorityTier, PriorityJobFactor, OverSubscribe, Default)
  delete PartitionName=NAME
  reconfigure                       (admins: read cluster.yaml again)
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
		if _, _, ok := partitionWords(a.args); ok {
			return runPartitionChange(cmd, env, &a.client, "update", a.args)
		}
		return runUpdate(cmd, env, &a.client, "scontrol", a.args)
	case "create":
		if err := need(1); err != nil {
			return err
		}
		words := a.args
		if _, _, ok := partitionWords(words); ok {
			return runPartitionChange(cmd, env, &a.client, "create", words)
		}
		if isResvEntity(words[0]) {
			words = words[1:]
		} else if k, _, _ := strings.Cut(words[0], "="); !isResvNameKey(strings.ToLower(k)) {
			return usageError("scontrol", "create: Parity creates reservations (scontrol create reservation KEY=VALUE...) and partitions (PartitionName=NAME KEY=VALUE...), not %q", words[0])
		}
		return runReservation(cmd, env, &a.client, a.show, "scontrol", "create", words)
	case "delete":
		if err := need(1); err != nil {
			return err
		}
		words := a.args
		if _, _, ok := partitionWords(words); ok {
			return runPartitionChange(cmd, env, &a.client, "delete", words)
		}
		if len(words) == 2 && isResvEntity(words[0]) {
			words = words[1:]
		}
		if k, _, ok := strings.Cut(words[0], "="); ok && !isResvNameKey(strings.ToLower(k)) {
			return usageError("scontrol", "delete: Parity deletes reservations (ReservationName=NAME) and partitions (PartitionName=NAME), not %q", words[0])
		}
		return runReservation(cmd, env, &a.client, a.show, "scontrol", "delete", words)
	case "reconfigure", "reconfig":
		if len(a.args) > 0 {
			return usageError("scontrol", "%s takes no arguments, not %q", a.command, a.args)
		}
		return runReconfigure(cmd, env, &a.client)
	case "ping":
		if len(a.args) > 0 {
			return &exitError{code: 1, err: fmt.Errorf("scontrol: ping takes no arguments, not %q", a.args), slurmText: "too many arguments for keyword:ping"}
		}
		return runPing(cmd, env, &a.client)
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
	return usageError("scontrol", "invalid keyword: %s (Parity serves show, update, create, delete, reconfigure, ping, hold, uhold, release, requeue, requeuehold, suspend, resume)", a.command)
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
