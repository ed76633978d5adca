package userverbs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/cmd/internal/sbatch"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
	"github.com/parityhpc/parity/scheduler/client/format"
)

// userEnv is what the user verbs take from the world: the clock, the zone
// times are printed in, the process environment, the working directory,
// the host name and standard input. Tests build their own.
type userEnv struct {
	now      func() time.Time
	loc      *time.Location
	getenv   func(string) string
	environ  func() []string
	getwd    func() (string, error)
	hostname func() (string, error)
	stdin    io.Reader
}

func realUserEnv() userEnv {
	return userEnv{now: time.Now, loc: time.Local, getenv: os.Getenv, environ: os.Environ,
		getwd: os.Getwd, hostname: os.Hostname, stdin: os.Stdin}
}

func (e userEnv) render() format.Env { return format.Env{Now: e.now(), Loc: e.loc} }

// rpcTimeout bounds one verb's calls, as Slurm's MessageTimeout does.
const rpcTimeout = 60 * time.Second

// clientFlags are the flags of every verb that talks to the controller.
type clientFlags struct {
	controller string
	token      string
	ca         string
	json       bool
}

// isConnFlag reports whether name is a connection flag that verbs parsing
// their own command line (submit, scontrol) take with a value.
func isConnFlag(name string) bool { return sbatch.IsConnFlag(name) }

// setConn sets the connection flag name (one isConnFlag accepts).
func (f *clientFlags) setConn(name, value string) {
	switch name {
	case "--controller":
		f.controller = value
	case "--token":
		f.token = value
	case "--ca":
		f.ca = value
	}
}

// register adds --controller, --token, --ca and --json to cmd.
func (f *clientFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.controller, "controller", "", "controller address host:port (default $"+client.EnvController+" or "+client.DefaultAddr+")")
	fl.StringVar(&f.ca, "ca", "", "PEM file of the CA that signed the controller's TLS certificate (default $"+client.EnvCA+"; unset: plain TCP)")
	fl.StringVar(&f.token, "token", "", "API token (default $"+client.EnvToken+" or ~/.config/parity/token)")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON instead of Slurm's text layout (jobs, nodes and partitions: slurmrestd's data parser v0.0.44 objects, as squeue --json; others: stable field names)")
}

// session is one verb's connection to the controller. grpc connects
// lazily, on the first call, so resolving flags costs nothing.
type session struct {
	verb   string
	addr   string
	c      *client.Client
	ctx    context.Context // the verb's calls, bounded by rpcTimeout
	cancel context.CancelFunc
}

// dial resolves the token and address and prepares a client.
func (f *clientFlags) dial(cmd *cobra.Command, verb string, env userEnv) (*session, error) {
	token := f.token
	if token == "" {
		token = env.getenv(client.EnvToken)
	}
	tok, err := client.ResolveToken(token)
	if err != nil {
		return nil, &exitError{code: 1, err: fmt.Errorf("%s: %w", verb, err)}
	}
	addr := f.controller
	if addr == "" {
		addr = env.getenv(client.EnvController)
	}
	addr = client.ResolveAddr(addr)
	var opts []grpc.DialOption
	ca := f.ca
	if ca == "" {
		ca = env.getenv(client.EnvCA)
	}
	if ca != "" {
		o, err := client.WithCA(ca)
		if err != nil {
			return nil, &exitError{code: 1, err: fmt.Errorf("%s: %w", verb, err)}
		}
		opts = append(opts, o)
	}
	c, err := client.Dial(cmd.Context(), addr, tok, opts...)
	if err != nil {
		return nil, &exitError{code: 1, err: fmt.Errorf("%s: %w", verb, err)}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), rpcTimeout)
	return &session{verb: verb, addr: addr, c: c, ctx: ctx, cancel: cancel}, nil
}

// close ends the session's calls and connection.
func (s *session) close() {
	s.cancel()
	s.c.Close()
}

// fail turns an error from a call into the verb's error: the controller's
// message verbatim ("parity: <verb>: <message>"), with a hint for the
// errors a person can fix, and exit status 1 as Slurm's commands use.
func (s *session) fail(err error) error {
	return verbError(s.verb, s.addr, err)
}

// jobFail is fail for one job of several: "<verb>: job N: <message>".
func (s *session) jobFail(id uint64, err error) error { return s.targetFail(jobTarget{id: id}, err) }

func verbError(verb, addr string, err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	msg := client.Message(err)
	if hint := statusHint(err, addr); hint != "" {
		msg += "\n" + hint
	}
	return &exitError{code: 1, err: fmt.Errorf("%s: %s", verb, msg)}
}

// statusHint says what to do about errors a person can fix.
func statusHint(err error, addr string) string {
	st, ok := status.FromError(err)
	if !ok {
		return ""
	}
	return clientenv.Hint(st.Code().String(), addr)
}

// argsBetween checks a verb's positional argument count, reporting it as
// "<verb>: ..." like every other usage error.
func argsBetween(lo, hi int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			return usageError(cmd.Name(), "want %s (see --help)", what)
		}
		return nil
	}
}

// usageError reports bad command-line input for verb, exit status 1.
func usageError(verb, format string, args ...any) error {
	return &exitError{code: 1, err: fmt.Errorf("%s: "+format, append([]any{verb}, args...)...)}
}

// writeMessagesJSON prints {key: [messages...]}.
func writeMessagesJSON[T proto.Message](w io.Writer, key string, ms []T) error {
	raw, err := format.Messages(ms)
	if err != nil {
		return err
	}
	return format.WriteJSON(w, map[string]any{key: raw})
}

// writeMessageJSON prints one message.
func writeMessageJSON(w io.Writer, m proto.Message) error {
	raw, err := format.Message(m)
	if err != nil {
		return err
	}
	return format.WriteJSON(w, raw)
}

// noShortHelp frees -h for Slurm's meaning (--noheader in squeue, sinfo
// and sprio) while keeping --help.
func noShortHelp(cmd *cobra.Command) {
	cmd.Flags().Bool("help", false, "help for "+cmd.Name())
}

// parseJobIDs reads job ids for verb, as a usage error when one is bad.
func parseJobIDs(verb string, words []string) ([]uint64, error) {
	ids, err := jobIDList(words)
	if err != nil {
		return nil, usageError(verb, "%v", err)
	}
	return ids, nil
}

// jobIDList reads job ids given as words or comma lists ("12", "12,13").
// Array task ids ("20_3", "20_[1-3]") are refused: the controller does
// not track array tasks yet, and acting on the whole array by mistake
// would be worse than an error.
func jobIDList(words []string) ([]uint64, error) {
	var out []uint64
	for _, w := range format.SplitList(words) {
		if strings.Contains(w, "_") {
			return nil, fmt.Errorf("job id %q: array task ids are not supported yet (use the array's job id)", w)
		}
		id, err := strconv.ParseUint(w, 10, 64)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("invalid job id %q", w)
		}
		out = append(out, id)
	}
	return out, nil
}
