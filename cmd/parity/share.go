package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/policy"
)

// defaultAccounts is where the account tree lives until sacctmgr's
// equivalent keeps it in the controller.
const defaultAccounts = "/etc/parity/accounts.yaml"

type shareOptions struct {
	src                                                acctSource
	accounts, users, accts, halfLife, reset, algorithm string
	long, parsable, parsable2, noHeader, allUsers      bool
	delimiter, json                                    string
}

func newShareCmd() *cobra.Command { return newShareCmdWith(realAcctEnv()) }

func newShareCmdWith(env acctEnv) *cobra.Command {
	var o shareOptions
	cmd := &cobra.Command{
		Use:   "share",
		Short: "Show fair-share standing per account and user from decayed ledger usage (sshare)",
		Long: `Builds the account tree from --accounts (YAML: accounts with shares, parent
and users; see below), reads billed usage (billing × seconds) from the
ledger, decays it with the half-life (and resets it with the reset period)
as the scheduler does, and prints sshare's columns. Under Fair Tree (the
default) NormShares is the share among siblings, EffectvUsage the share of
the parent's usage and LevelFS their ratio; FairShare is the users' rank.

With --controller (or $PARITY_CONTROLLER and no ledger named) the
controller answers instead, from its own account tree and the usage its
scheduler charges (since it started); a user sees only their own user rows.

  algorithm: fairtree      # or classic
  half_life: 7-0           # PriorityDecayHalfLife (0: no decay)
  reset: none              # none, daily, weekly, monthly, quarterly, yearly
  accounts:
    - name: physics
      shares: 40
      users: [{name: alice, shares: 2}, {name: bob, shares: parent}]
    - name: hep
      parent: physics`,
		Example: `  parity share --accounts accounts.yaml
  parity share --accounts accounts.yaml -l -A physics --parsable2
  sshare -u alice --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runShare(cmd, env, &o) },
	}
	f := cmd.Flags()
	o.src.register(cmd, env)
	def := env.getenv("PARITY_ACCOUNTS")
	if def == "" {
		def = defaultAccounts
	}
	f.StringVar(&o.accounts, "accounts", def, "account tree file (YAML; default $PARITY_ACCOUNTS or "+defaultAccounts+")")
	f.StringVarP(&o.accts, "account", "A", "", "only these accounts (comma-separated) and what is below them")
	f.StringVarP(&o.users, "users", "u", "", "user rows only for these users")
	f.BoolVarP(&o.allUsers, "all", "a", false, "all users (the default until the controller authenticates callers)")
	f.BoolVarP(&o.long, "long", "l", false, "add NormUsage and LevelFS")
	f.BoolVarP(&o.parsable, "parsable", "p", false, "'|'-separated with a trailing '|'")
	f.BoolVarP(&o.parsable2, "parsable2", "P", false, "'|'-separated")
	f.StringVar(&o.delimiter, "delimiter", "|", "separator for --parsable/--parsable2")
	f.BoolVarP(&o.noHeader, "noheader", "n", false, "no header")
	f.StringVar(&o.halfLife, "half-life", "", "override the file's half_life (Slurm duration, e.g. 7-0)")
	f.StringVar(&o.reset, "reset", "", "override the file's reset period")
	f.StringVar(&o.algorithm, "algorithm", "", "override the file's algorithm (fairtree or classic)")
	f.StringVar(&o.json, "json", "", "print JSON")
	f.Lookup("json").NoOptDefVal = "v1"
	return cmd
}

// shareSetup reads the account file and applies the overriding flags.
func shareSetup(o *shareOptions) (accounting.ShareSetup, error) {
	data, err := os.ReadFile(o.accounts)
	if err != nil {
		return accounting.ShareSetup{}, fmt.Errorf("--accounts: %w", err)
	}
	setup, err := accounting.ParseAccounts(data)
	if err != nil {
		return setup, fmt.Errorf("--accounts %s: %w", o.accounts, err)
	}
	if o.halfLife != "" {
		if setup.Decay.HalfLife, err = accounting.ParseDuration(o.halfLife); err != nil {
			return setup, fmt.Errorf("--half-life: %w", err)
		}
	}
	if o.reset != "" {
		if setup.Decay.Reset, err = accounting.ParseResetPeriod(o.reset); err != nil {
			return setup, fmt.Errorf("--reset: %w", err)
		}
	}
	switch a := strings.ToLower(o.algorithm); a {
	case "":
	case policy.AlgoFairTree, policy.AlgoClassic:
		setup.Algorithm = a
	default:
		return setup, fmt.Errorf("--algorithm %q: want %s or %s", o.algorithm, policy.AlgoFairTree, policy.AlgoClassic)
	}
	return setup, nil
}

func runShare(cmd *cobra.Command, env acctEnv, o *shareOptions) error {
	users, err := listFlag("--users", strings.ToLower(o.users))
	if err != nil {
		return err
	}
	accts, err := listFlag("--account", strings.ToLower(o.accts))
	if err != nil {
		return err
	}
	if o.json != "" && o.json != "v1" {
		return fmt.Errorf("--json=%q: the only data format is v1", o.json)
	}
	remote, err := o.src.useController(cmd, env)
	if err != nil {
		return err
	}
	if remote {
		return runShareRemote(cmd, env, o, users, accts)
	}
	setup, err := shareSetup(o)
	if err != nil {
		return err
	}
	tree, err := policy.NewAccountTree(setup.Associations)
	if err != nil {
		return fmt.Errorf("--accounts %s: %w", o.accounts, err)
	}
	for _, a := range accts {
		if _, ok := tree.Lookup(a); !ok {
			return fmt.Errorf("--account: no account %q in %s", a, o.accounts)
		}
	}
	ledger, err := openLedger(cmd.Context(), o.src.ledger)
	if err != nil {
		return err
	}
	defer ledger.Close()
	now := env.now()
	setup.Decay.Location = env.loc
	spans, err := ledger.Usage(cmd.Context(), setup.Decay.Horizon(now), now)
	if err != nil {
		return err
	}
	rows := policy.FairShares(tree, accounting.DecayedUsage(spans, now, setup.Decay), setup.Algorithm)
	if o.json != "" {
		return accounting.WriteSharesJSON(cmd.OutOrStdout(), rows, now)
	}
	return accounting.RenderShares(cmd.OutOrStdout(), tree, rows, setup.Algorithm, accounting.ShareOptions{
		Long: o.long, Users: users, Accounts: accts, Parsable: o.parsable || o.parsable2, Trailing: o.parsable,
		NoHeader: o.noHeader, Delimiter: o.delimiter})
}

// runShareRemote prints the controller's own fair-share standing: its
// account tree, its usage and its algorithm, so the file's settings and
// the overriding flags do not apply.
func runShareRemote(cmd *cobra.Command, env acctEnv, o *shareOptions, users, accts []string) error {
	for _, name := range []string{"accounts", "half-life", "reset", "algorithm"} {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s applies to a ledger file; the controller uses its own configuration", name)
		}
	}
	s, err := o.src.dial(cmd, "share", env)
	if err != nil {
		return err
	}
	defer s.Close()
	sh, err := s.Client.Shares(s.Ctx)
	if err != nil {
		return s.Fail(err)
	}
	for _, a := range accts {
		if _, ok := sh.Tree.Lookup(a); !ok {
			return fmt.Errorf("--account: the controller has no account %q", a)
		}
	}
	if o.json != "" {
		return accounting.WriteSharesJSON(cmd.OutOrStdout(), sh.Rows, env.now())
	}
	return accounting.RenderShares(cmd.OutOrStdout(), sh.Tree, sh.Rows, sh.Algorithm, accounting.ShareOptions{
		Long: o.long, Users: users, Accounts: accts, Parsable: o.parsable || o.parsable2, Trailing: o.parsable,
		NoHeader: o.noHeader, Delimiter: o.delimiter})
}
