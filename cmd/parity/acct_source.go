package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/userverbs"
	"github.com/parityhpc/parity/scheduler/client"
)

// acctSource is where acct and share read: a ledger file (--ledger, alias
// --db) or the controller's Accounting service (--controller, or the
// client configuration the other verbs use).
type acctSource struct {
	ledger string
	remote userverbs.RemoteFlags
}

// register adds --ledger/--db, --controller and --token. (--json is each
// verb's own: it takes a data format there.)
func (s *acctSource) register(cmd *cobra.Command, env acctEnv) {
	ledgerFlag(cmd, env, &s.ledger)
	f := cmd.Flags()
	f.StringVar(&s.ledger, "db", s.ledger, "same as --ledger")
	s.remote.Register(cmd, "ask the controller at host:port instead of reading a ledger file, when no ledger is named")
}

// useController decides the source: a ledger named by flag or
// $PARITY_LEDGER wins; else a controller named by flag or
// $PARITY_CONTROLLER; else the default ledger file when this host has
// one, the default controller otherwise.
func (s *acctSource) useController(cmd *cobra.Command, env acctEnv) (bool, error) {
	f := cmd.Flags()
	namedLedger := f.Changed("ledger") || f.Changed("db")
	namedController := f.Changed("controller")
	switch {
	case namedLedger && namedController:
		return false, errors.New("--ledger/--db and --controller are exclusive: read a ledger file or ask the controller")
	case namedLedger:
		return false, nil
	case namedController:
		return true, nil
	case env.getenv("PARITY_LEDGER") != "":
		return false, nil
	case env.getenv(client.EnvController) != "":
		return true, nil
	}
	_, err := os.Stat(s.ledger)
	return err != nil, nil
}

// dial connects to the controller for verb.
func (s *acctSource) dial(cmd *cobra.Command, verb string, env acctEnv) (*userverbs.Remote, error) {
	return s.remote.Dial(cmd, verb, env.getenv)
}
