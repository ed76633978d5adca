package sbatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
	"github.com/parityhpc/parity/scheduler/client/jsonsubmit"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// Usage is the lean sbatch's usage line.
const Usage = "Usage:\n  sbatch [sbatch options] [SCRIPT [ARGS...]]\n\n"

// stampLayout is how times are printed (format.TimeLayout, Slurm's).
const stampLayout = "2006-01-02T15:04:05"

// HandOff runs a submission this package does not serve in a program
// that does (parity-lite or parity, over gRPC), with the same arguments:
// --wait, which polls the job, -M, which asks the cluster its name, and
// a controller that serves TLS (--ca or $PARITY_CA), which the lean
// client does not speak so as not to link crypto/tls. req is the parsed request (its script, when it came from
// standard input, has been read already). It returns the exit status.
type HandOff func(ctx context.Context, args []string, req *jobspec.Request) int

// Run is `sbatch ARGS` (args without the program name) over the
// controller's HTTP/JSON endpoint: it prints what `parity submit` prints
// and returns the exit status. --wait and TLS go to handOff.
func Run(ctx context.Context, args []string, env Env, stdout, stderr io.Writer, handOff HandOff) int {
	f, rest, help, err := SplitArgs(args)
	if err != nil {
		return report(stderr, env.Voice, 1, fmt.Errorf("submit: %w", err))
	}
	if help {
		if _, err := io.WriteString(stdout, Usage+Help+"\n"); err != nil {
			return 1
		}
		return 0
	}
	code := ExitCode(env.Getenv)
	req, err := Parse(env, rest)
	if err != nil {
		return report(stderr, env.Voice, code, fmt.Errorf("submit: %w", err))
	}
	// -M asks the controller its cluster's name, which the JSON endpoint
	// does not serve.
	if !req.ParseOnly && (req.Wait || len(req.Clusters) > 0 || f.CA != "" || env.Getenv(clientenv.EnvCA) != "" || !plainAddr(controllerAddr(env, f))) {
		return handOff(ctx, args, req) // which prints the warnings
	}
	for _, w := range req.Warnings {
		fmt.Fprintln(stderr, env.Voice.Warning("submit", w))
	}
	if req.ParseOnly {
		if err := WriteParseOnly(stdout, req, f.JSON); err != nil {
			return report(stderr, env.Voice, 1, err)
		}
		return 0
	}
	if err := submit(ctx, env, f, req, stdout, stderr); err != nil {
		return report(stderr, env.Voice, code, err)
	}
	return 0
}

// report prints err as every verb does and returns code.
func report(stderr io.Writer, v Voice, code int, err error) int {
	fmt.Fprintln(stderr, v.Error("submit", err))
	return code
}

// submit posts req and prints the answer.
func submit(ctx context.Context, env Env, f Flags, req *jobspec.Request, out, errw io.Writer) error {
	token := f.Token
	if token == "" {
		token = env.Getenv(clientenv.EnvToken)
	}
	tok, err := clientenv.ResolveToken(token)
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	addr := controllerAddr(env, f)
	c, err := jsonsubmit.New(addr, tok)
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, jsonsubmit.DefaultTimeout)
	defer cancel()
	resp, raw, err := c.Submit(ctx, &jsonapi.SubmitRequest{Spec: jsonapi.FromRequest(req), TestOnly: req.TestOnly})
	if err != nil {
		return callError(err, addr)
	}
	if !f.JSON {
		// The controller's notes on the accepted job (a listed partition
		// dropped), as parity submit prints them.
		for _, w := range resp.Warnings {
			fmt.Fprintln(errw, env.Voice.Warning("submit", w))
		}
	}
	switch {
	case f.JSON:
		err = WriteJSON(out, json.RawMessage(raw))
	case req.TestOnly:
		_, err = fmt.Fprintln(errw, "sbatch:", resp.WillRunText(env.Loc, stampLayout))
	case req.Parsable:
		_, err = fmt.Fprintln(out, resp.JobID)
	case !req.Quiet:
		_, err = fmt.Fprintln(out, resp.Message)
	}
	return err
}

// controllerAddr is where the controller is: --controller, else
// $PARITY_CONTROLLER, else the default.
func controllerAddr(env Env, f Flags) string {
	addr := f.Controller
	if addr == "" {
		addr = env.Getenv(clientenv.EnvController)
	}
	return clientenv.ResolveAddr(addr)
}

// plainAddr reports whether addr is host:port, or a comma-separated list
// of them (several controllers), which the lean client dials; gRPC's
// target forms ("dns:///h:p", "unix:/path") are the gRPC client's to
// resolve.
func plainAddr(addr string) bool {
	if strings.Contains(addr, "/") {
		return false
	}
	for a := range strings.SplitSeq(addr, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			return false
		}
	}
	return strings.Trim(addr, ", ") != ""
}

// callError is the controller's message with a hint, as the gRPC verbs
// print it.
func callError(err error, addr string) error {
	code := "Unknown"
	var refused *jsonsubmit.Error
	var down *jsonsubmit.UnavailableError
	switch {
	case errors.As(err, &refused):
		code = refused.Code
	case errors.As(err, &down), errors.Is(err, context.DeadlineExceeded):
		code = "Unavailable"
	}
	msg := err.Error()
	if hint := clientenv.Hint(code, addr); hint != "" {
		msg += "\n" + hint
	}
	return fmt.Errorf("submit: %s", msg)
}
