package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/store"
)

// defaultLedger is where the controller keeps its accounting database.
const defaultLedger = "/var/lib/parity/accounting.db"

// acctEnv is what the accounting verbs take from the world: the clock,
// the zone times are read and printed in, and the environment.
type acctEnv struct {
	now    func() time.Time
	loc    *time.Location
	getenv func(string) string
	// uid looks a user's numeric id up (nil: names stay names).
	uid func(string) (string, bool)
}

func realAcctEnv() acctEnv {
	return acctEnv{now: time.Now, loc: time.Local, getenv: os.Getenv, uid: lookupUID}
}

// lookupUID is this host's uid of a user name, as sacct prints who
// cancelled a job.
func lookupUID(name string) (string, bool) {
	u, err := user.Lookup(name)
	if err != nil {
		return "", false
	}
	return u.Uid, true
}

// ledgerFlag registers --ledger, defaulting to $PARITY_LEDGER.
func ledgerFlag(cmd *cobra.Command, env acctEnv, path *string) {
	def := env.getenv("PARITY_LEDGER")
	if def == "" {
		def = defaultLedger
	}
	cmd.Flags().StringVar(path, "ledger", def, "accounting ledger (SQLite file; default $PARITY_LEDGER or "+defaultLedger+")")
}

// openLedger opens the ledger read-only: the command line never writes it.
func openLedger(ctx context.Context, path string) (*store.SQLite, error) {
	l, err := store.OpenSQLite(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("--ledger: %w", err)
	}
	return l, nil
}

// listFlag splits a comma-separated option, or returns nil when unset.
func listFlag(name, val string) ([]string, error) {
	if val == "" {
		return nil, nil
	}
	return accounting.SplitList(name, val)
}

type acctOptions struct {
	src                                       acctSource
	users, accounts, partitions, qos, names   string
	states, jobs, start, end                  string
	format, delimiter                         string
	allocations, duplicates, brief, long      bool
	parsable, parsable2, noHeader, helpFormat bool
	allUsers                                  bool
	json                                      string
}

func newAcctCmd() *cobra.Command { return newAcctCmdWith(realAcctEnv()) }

func newAcctCmdWith(env acctEnv) *cobra.Command {
	var o acctOptions
	cmd := &cobra.Command{
		Use:   "acct",
		Short: "Show accounting records of jobs and steps (sacct)",
		Long: `Reads the accounting ledger and prints one line per job allocation and per
step (batch, extern, numbered steps), as sacct does.

The lines come from a ledger file (--ledger/--db or $PARITY_LEDGER) or from
the controller (--controller or $PARITY_CONTROLLER, with the token the
other verbs use), which shows a user only their own jobs. Without either,
the default ledger file is read when this host has it.

Without -S, jobs eligible since midnight today are shown; with -j since the
epoch; with -s alone, those in that state now. -S/-E take Slurm's time
forms: YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY][-HH:MM], HH:MM, today, midnight,
noon, now-3days, now-2hours, …

Fields for --format (name%width, negative width left-aligns): see --helpformat.
GPUUUIDs, StartDecision and EndDecision are Parity's own fields.`,
		Example: `  parity acct -u alice -S 2024-03-01 -E now
  parity acct -j 1234,1300_7 --format JobID,JobName%30,State,AllocTRES%60
  parity acct -X -s failed,oom -S now-7days --parsable2
  parity acct -A physics -S today --json
  parity acct --controller ctl01:6817 -S now-7days`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.helpFormat {
				return printFieldNames(cmd.OutOrStdout())
			}
			return runAcct(cmd, env, &o)
		},
	}
	f := cmd.Flags()
	o.src.register(cmd, env)
	f.StringVarP(&o.users, "user", "u", "", "only these users (comma-separated)")
	f.BoolVarP(&o.allUsers, "allusers", "a", false, "all users (a ledger file shows everyone; the controller shows a user their own lines only)")
	f.StringVarP(&o.accounts, "accounts", "A", "", "only these accounts")
	f.StringVarP(&o.partitions, "partition", "r", "", "only these partitions")
	f.StringVarP(&o.qos, "qos", "q", "", "only these QOS")
	f.StringVar(&o.names, "name", "", "only jobs with these names")
	f.StringVarP(&o.states, "state", "s", "", "only these states (long or short names: completed,CD,f,oom,…)")
	f.StringVarP(&o.jobs, "jobs", "j", "", "only these jobs: 123, 123_4 (array task), 123.batch (step)")
	f.StringVarP(&o.start, "starttime", "S", "", "window start (default: midnight today; see above)")
	f.StringVarP(&o.end, "endtime", "E", "", "window end (default: now)")
	f.BoolVarP(&o.allocations, "allocations", "X", false, "job allocations only, no steps")
	f.BoolVarP(&o.duplicates, "duplicates", "D", false, "every run of requeued jobs, not only the latest")
	f.StringVarP(&o.format, "format", "o", "", "fields to print (default $SACCT_FORMAT or "+accounting.DefaultFormat+")")
	f.BoolVarP(&o.brief, "brief", "b", false, "JobID, State and ExitCode only")
	f.BoolVarP(&o.long, "long", "l", false, "the long field list")
	f.BoolVarP(&o.parsable, "parsable", "p", false, "'|'-separated with a trailing '|'")
	f.BoolVarP(&o.parsable2, "parsable2", "P", false, "'|'-separated")
	f.StringVar(&o.delimiter, "delimiter", "|", "separator for --parsable/--parsable2")
	f.BoolVarP(&o.noHeader, "noheader", "n", false, "no header")
	f.BoolVarP(&o.helpFormat, "helpformat", "e", false, "list the --format fields")
	f.StringVar(&o.json, "json", "", "print JSON: sacct --json's data parser v0.0.44 objects, as GET /slurmdb/v0.0.44/jobs/ answers (formatting options do not apply)")
	f.Lookup("json").NoOptDefVal = acctJSONVersion
	return cmd
}

func printFieldNames(w io.Writer) error {
	names := accounting.FieldNames()
	for i := 0; i < len(names); i += 5 {
		row := names[i:min(i+5, len(names))]
		for j := range row {
			row[j] = fmt.Sprintf("%-18s", row[j])
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(strings.Join(row, ""), " ")); err != nil {
			return err
		}
	}
	return nil
}

// acctColumns picks the field list: --format, else -b/-l, else
// $SACCT_FORMAT, else sacct's default.
func acctColumns(env acctEnv, o *acctOptions) ([]accounting.Column, error) {
	spec, flag := o.format, "--format"
	switch {
	case spec != "":
	case o.brief:
		spec = accounting.BriefFormat
	case o.long:
		spec = accounting.LongFormat
	case env.getenv("SACCT_FORMAT") != "":
		spec, flag = env.getenv("SACCT_FORMAT"), "SACCT_FORMAT"
	default:
		spec = accounting.DefaultFormat
	}
	cols, err := accounting.ParseFormat(spec)
	var fe *accounting.FieldError
	if errors.As(err, &fe) && !fe.NotRecorded {
		// In sacct's words, whichever list named it.
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return cols, nil
}

// acctFilter turns the options into a ledger filter, naming the flag of
// any bad value.
func acctFilter(env acctEnv, o *acctOptions, now time.Time) (accounting.Filter, error) {
	var f accounting.Filter
	var err error
	lists := []struct {
		flag, val string
		dst       *[]string
	}{
		{"--user", o.users, &f.Users}, {"--accounts", o.accounts, &f.Accounts}, {"--partition", o.partitions, &f.Partitions},
		{"--qos", o.qos, &f.QOS}, {"--name", o.names, &f.Names},
	}
	for _, l := range lists {
		if *l.dst, err = listFlag(l.flag, l.val); err != nil {
			return f, err
		}
	}
	// Slurm keeps user and account names lower case.
	for _, l := range [][]string{f.Users, f.Accounts} {
		for i := range l {
			l[i] = strings.ToLower(l[i])
		}
	}
	if o.states != "" {
		if f.States, err = accounting.ParseStates(o.states); err != nil {
			return f, fmt.Errorf("--state: %w", err)
		}
	}
	if o.jobs != "" {
		if f.Jobs, err = accounting.ParseJobSelectors(o.jobs); err != nil {
			return f, fmt.Errorf("--jobs: %w", err)
		}
	}
	f.Start, f.End, err = accounting.ResolveWindow(accounting.WindowInput{
		Start: o.start, End: o.end, HaveJobs: o.jobs != "", HaveStates: o.states != ""}, now, env.loc)
	if err != nil {
		return f, err
	}
	f.AllocationsOnly, f.Duplicates = o.allocations, o.duplicates
	return f, nil
}

func runAcct(cmd *cobra.Command, env acctEnv, o *acctOptions) error {
	now := env.now()
	cols, err := acctColumns(env, o)
	if err != nil {
		return err
	}
	f, err := acctFilter(env, o, now)
	if err != nil {
		return err
	}
	if o.json != "" && o.json != acctJSONVersion {
		return fmt.Errorf("--json=%q: the only data parser is %s", o.json, acctJSONVersion)
	}
	recs, err := acctRecords(cmd, env, o, f)
	if err != nil {
		return err
	}
	view := accounting.View{Now: now, Loc: env.loc, UID: env.uid}
	if o.json != "" {
		return writeAcctJSON(cmd.OutOrStdout(), recs, env.now)
	}
	return accounting.RenderTable(cmd.OutOrStdout(), recs, cols, view, accounting.TableOptions{
		Parsable: o.parsable || o.parsable2, Trailing: o.parsable, Delimiter: o.delimiter, NoHeader: o.noHeader})
}

// acctRecords reads the lines f selects from the ledger file or, asked
// for, from the controller (which shows a user only their own lines).
func acctRecords(cmd *cobra.Command, env acctEnv, o *acctOptions, f accounting.Filter) ([]accounting.JobRecord, error) {
	remote, err := o.src.useController(cmd, env)
	if err != nil {
		return nil, err
	}
	if remote {
		s, err := o.src.dial(cmd, "acct", env)
		if err != nil {
			return nil, err
		}
		defer s.Close()
		recs, err := s.Client.AccountingJobs(s.Ctx, f)
		if err != nil {
			return nil, s.Fail(err)
		}
		return recs, nil
	}
	ledger, err := openLedger(cmd.Context(), o.src.ledger)
	if err != nil {
		return nil, err
	}
	defer ledger.Close()
	return ledger.Query(cmd.Context(), f)
}
