package userverbs

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/client"
)

// RemoteFlags are the connection flags of verbs that live outside this
// package because they also read local files the lean binary must not
// link (acct and share read ledger files).
type RemoteFlags struct {
	Controller, Token, CA string
}

// Register adds --controller, --token and --ca to cmd (not --json: those
// verbs give it their own meaning).
func (r *RemoteFlags) Register(cmd *cobra.Command, what string) {
	f := cmd.Flags()
	f.StringVar(&r.Controller, "controller", "", what+" (default $"+client.EnvController+")")
	f.StringVar(&r.Token, "token", "", "API token for --controller (default $"+client.EnvToken+" or ~/.config/parity/token)")
	f.StringVar(&r.CA, "ca", "", "PEM file of the CA that signed the controller's TLS certificate (default $"+client.EnvCA+"; unset: plain TCP)")
}

// Remote is one such verb's connection, resolved as every user verb
// resolves its own (flags, then $PARITY_*, then the defaults).
type Remote struct {
	Client *client.Client
	Ctx    context.Context // the verb's calls, bounded as the user verbs' are
	s      *session
}

// Dial prepares the connection for verb; getenv reads the environment.
func (r RemoteFlags) Dial(cmd *cobra.Command, verb string, getenv func(string) string) (*Remote, error) {
	f := clientFlags{controller: r.Controller, token: r.Token, ca: r.CA}
	s, err := f.dial(cmd, verb, userEnv{now: time.Now, loc: time.Local, getenv: getenv})
	if err != nil {
		return nil, err
	}
	return &Remote{Client: s.c, Ctx: s.ctx, s: s}, nil
}

// Close ends the calls and the connection.
func (r *Remote) Close() { r.s.close() }

// Fail turns a call's error into the verb's error, as the user verbs do.
func (r *Remote) Fail(err error) error { return r.s.fail(err) }
