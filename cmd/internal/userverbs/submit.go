package userverbs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/client/format"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

func newSubmitCmd() *cobra.Command { return newSubmitCmdWith(realUserEnv()) }

func newSubmitCmdWith(env userEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "submit [sbatch options] [SCRIPT [ARGS...]]",
		Short: "Submit a batch script (sbatch)",
		Long: `Submit a batch script as sbatch does: #SBATCH directives are read up to the
first command, SBATCH_* environment variables override them and command-line
options override both. Without SCRIPT the script is read from standard input;
--wrap "cmd" makes a /bin/sh script around cmd.

  --parsable          print only the job id
  -Q, --quiet         print nothing on success
  --test-only         validate against the cluster and say where and when the
                      job would start; nothing is queued
  --parse-only        print the fully resolved request (with --json: as JSON,
                      each field's source included); nothing is submitted
  -W, --wait          wait for the job to end; exit with its exit code

Parity's own flags (--controller, --token, --ca, --json) may appear anywhere before
SCRIPT. Errors name the option, its value and where it came from.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSubmit(cmd, env, args)
		},
	}
}

// splitSubmitArgs takes Parity's own flags out of an sbatch command line,
// up to the script; everything after the script belongs to the script.
func splitSubmitArgs(args []string) (f clientFlags, rest []string, help bool, err error) {
	for i := 0; i < len(args); {
		w := args[i]
		name, value, attached := strings.Cut(w, "=")
		switch {
		case w == "--json":
			f.json = true
			i++
			continue
		case w == "-h" || w == "--help" || w == "--usage":
			return f, nil, true, nil
		case isConnFlag(name):
			if !attached {
				if i+1 >= len(args) {
					return f, nil, false, usageError("submit", "%s requires a value", name)
				}
				value = args[i+1]
				i++
			}
			f.setConn(name, value)
			i++
			continue
		}
		n := jobspec.ArgWords(args[i:])
		if n == 0 {
			return f, append(rest, args[i:]...), false, nil
		}
		rest = append(rest, args[i:i+n]...)
		i += n
	}
	return f, rest, false, nil
}

func runSubmit(cmd *cobra.Command, env userEnv, args []string) error {
	f, rest, help, err := splitSubmitArgs(args)
	if err != nil {
		return err
	}
	if help {
		return cmd.Help()
	}
	req, err := parseSubmission(env, rest)
	fail := submitFailure(env)
	if err != nil {
		return fail(err)
	}
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	for _, w := range req.Warnings {
		fmt.Fprintf(errw, "parity: submit: warning: %s\n", w)
	}
	if req.ParseOnly {
		shown := redactToken(req)
		if f.json {
			return format.WriteJSON(out, shown)
		}
		return writeRequestText(out, shown)
	}
	s, err := f.dial(cmd, "submit", env)
	if err != nil {
		return fail(err)
	}
	defer s.close()
	spec := format.Spec(req)
	if req.TestOnly {
		resp, err := s.c.SubmitTest(s.ctx, spec)
		if err != nil {
			return fail(s.fail(err))
		}
		if f.json {
			return writeMessageJSON(out, resp)
		}
		for _, w := range resp.GetWarnings() {
			fmt.Fprintf(errw, "parity: submit: warning: %s\n", w)
		}
		msg := resp.GetMessage()
		if resp.GetExpectedStart() != nil {
			msg += "; expected to start at " + format.Stamp(resp.GetExpectedStart(), env.loc, "")
		}
		_, err = fmt.Fprintln(out, msg)
		return err
	}
	got, err := s.c.SubmitDetailed(s.ctx, spec)
	if err != nil {
		return fail(s.fail(err))
	}
	id := got.GetJobId()
	for _, w := range got.GetWarnings() {
		fmt.Fprintf(errw, "parity: submit: warning: %s\n", w)
	}
	resp := &pb.SubmitResponse{JobId: id, Message: fmt.Sprintf("Submitted batch job %d", id), Warnings: got.GetWarnings()}
	switch {
	case f.json:
		err = writeMessageJSON(out, resp)
	case req.Parsable:
		_, err = fmt.Fprintln(out, id)
	case !req.Quiet:
		_, err = fmt.Fprintln(out, resp.GetMessage())
	}
	if err != nil || !req.Wait {
		return err
	}
	return waitForJob(cmd.Context(), s, id, fail)
}

// redactToken hides the API token in what --parse-only prints, so that
// pasting the output into a ticket does not hand out the credential.
func redactToken(req *jobspec.Request) *jobspec.Request {
	if _, ok := req.Env[client.EnvToken]; !ok {
		return req
	}
	shown := *req
	shown.Env = maps.Clone(req.Env)
	shown.Env[client.EnvToken] = "<redacted>"
	return &shown
}

// parseSubmission resolves the sbatch request from the command line, the
// environment and the script.
func parseSubmission(env userEnv, args []string) (*jobspec.Request, error) {
	vars := map[string]string{}
	for _, kv := range env.environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	wd, err := env.getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	host, _ := env.hostname()
	user := vars["USER"]
	if user == "" {
		user = vars["LOGNAME"]
	}
	return jobspec.Parse(nil, args, vars, jobspec.ParseOptions{
		Now: env.now(), Location: env.loc, User: user, SubmitHost: host, SubmitDir: wd,
		ReadScript: func(path, workDir string) ([]byte, error) { return readScript(path, workDir, vars["PATH"]) },
		ReadStdin:  func() ([]byte, error) { return io.ReadAll(env.stdin) },
		ReadFile:   os.ReadFile,
	})
}

// readScript finds the script as sbatch does: an absolute path, a path
// relative to the working directory, then (for a bare name) $PATH.
func readScript(path, workDir, searchPath string) ([]byte, error) {
	candidates := []string{path}
	if !filepath.IsAbs(path) {
		candidates = []string{filepath.Join(workDir, path)}
		if !strings.ContainsRune(path, '/') {
			for _, dir := range filepath.SplitList(searchPath) {
				if dir != "" {
					candidates = append(candidates, filepath.Join(dir, path))
				}
			}
		}
	}
	var first error
	for _, c := range candidates {
		b, err := os.ReadFile(c)
		if err == nil {
			return b, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// submitFailure makes submit's errors exit with $SLURM_EXIT_ERROR when it
// is set, as sbatch does, and 1 otherwise.
func submitFailure(env userEnv) func(error) error {
	code := 1
	if v, err := strconv.Atoi(env.getenv("SLURM_EXIT_ERROR")); err == nil && v > 0 && v < 256 {
		code = v
	}
	return func(err error) error {
		var ee *exitError
		if errors.As(err, &ee) {
			return &exitError{code: code, err: ee.err}
		}
		return &exitError{code: code, err: fmt.Errorf("submit: %w", err)}
	}
}

// waitForJob polls the job until it ends (sbatch --wait) and exits with
// its exit code; 1 when a signal ended it.
func waitForJob(ctx context.Context, s *session, id uint64, fail func(error) error) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		callCtx, cancel := context.WithTimeout(ctx, rpcTimeout)
		j, err := s.c.GetJob(callCtx, id, false)
		cancel()
		if err != nil {
			return fail(s.fail(err))
		}
		if !slices.Contains([]string{"PENDING", "RUNNING", "COMPLETING", "REQUEUED"}, j.GetState()) {
			switch {
			case j.GetExitSignal() != 0:
				return &exitError{code: 1, err: fmt.Errorf("submit: job %d ended with signal %d (%s)", id, j.GetExitSignal(), j.GetState())}
			case j.GetExitCode() != 0:
				return &exitError{code: int(j.GetExitCode()), err: fmt.Errorf("submit: job %d ended with exit code %d (%s)", id, j.GetExitCode(), j.GetState())}
			case j.GetState() != "COMPLETED":
				return &exitError{code: 1, err: fmt.Errorf("submit: job %d ended %s", id, j.GetState())}
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// writeRequestText prints the resolved request one field a line, with
// where each value came from.
func writeRequestText(w io.Writer, req *jobspec.Request) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "sources" && k != "warnings" && k != "env" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out strings.Builder
	for _, k := range keys {
		line := fmt.Sprintf("%-18s %s", k, fields[k])
		if src := req.Sources[k]; src != "" {
			line += "  (" + src + ")"
		}
		out.WriteString(line + "\n")
	}
	fmt.Fprintf(&out, "%-18s %d variables (see --json)\n", "env", len(req.Env))
	_, err = io.WriteString(w, out.String())
	return err
}
