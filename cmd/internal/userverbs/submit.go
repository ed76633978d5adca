package userverbs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/sbatch"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client/format"
)

func newSubmitCmdWith(env userEnv) *cobra.Command {
	return &cobra.Command{
		Use:                "submit [sbatch options] [SCRIPT [ARGS...]]",
		Short:              "Submit a batch script (sbatch)",
		Long:               sbatch.Help,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSubmit(cmd, env, args)
		},
	}
}

// splitSubmitArgs takes Parity's own flags out of an sbatch command line,
// up to the script; everything after the script belongs to the script.
func splitSubmitArgs(args []string) (f clientFlags, rest []string, help bool, err error) {
	sf, rest, help, err := sbatch.SplitArgs(args)
	if err != nil {
		return f, nil, false, usageError("submit", "%v", err)
	}
	return clientFlags{controller: sf.Controller, token: sf.Token, ca: sf.CA, json: sf.JSON}, rest, help, nil
}

func runSubmit(cmd *cobra.Command, env userEnv, args []string) error {
	f, rest, help, err := splitSubmitArgs(args)
	if err != nil {
		return err
	}
	if help {
		return cmd.Help()
	}
	req, err := sbatch.Parse(env.sbatch(), rest)
	fail := submitFailure(env)
	if err != nil {
		return fail(err)
	}
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	for _, w := range req.Warnings {
		fmt.Fprintln(errw, voiceOf(cmd).Warning("submit", w))
	}
	if req.ParseOnly {
		return sbatch.WriteParseOnly(out, req, f.json)
	}
	s, err := f.dial(cmd, "submit", env)
	if err != nil {
		return fail(err)
	}
	defer s.close()
	cluster, err := checkClusters(s, req.Clusters)
	if err != nil {
		return fail(err)
	}
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
			fmt.Fprintln(errw, voiceOf(cmd).Warning("submit", w))
		}
		_, err = fmt.Fprintln(errw, "sbatch:", api.SubmitResponseToJSON(resp).WillRunText(env.loc, format.TimeLayout))
		return err
	}
	got, err := s.c.SubmitDetailed(s.ctx, spec)
	if err != nil {
		return fail(s.fail(err))
	}
	id := got.GetJobId()
	for _, w := range got.GetWarnings() {
		fmt.Fprintln(errw, voiceOf(cmd).Warning("submit", w))
	}
	resp := &pb.SubmitResponse{JobId: id, Message: fmt.Sprintf("Submitted batch job %d", id), Warnings: got.GetWarnings()}
	parsable := strconv.FormatUint(id, 10)
	if cluster != "" {
		// sbatch -M names the cluster it submitted to.
		resp.Message += " on cluster " + cluster
		parsable += ";" + cluster
	}
	switch {
	case f.json:
		err = writeMessageJSON(out, resp)
	case req.Parsable:
		_, err = fmt.Fprintln(out, parsable)
	case !req.Quiet:
		_, err = fmt.Fprintln(out, resp.GetMessage())
	}
	if err != nil || !req.Wait {
		return err
	}
	return waitForJob(cmd.Context(), s, id, fail)
}

// sbatch is the environment as the sbatch package takes it.
func (e userEnv) sbatch() sbatch.Env {
	return sbatch.Env{Now: e.now, Loc: e.loc, Getenv: e.getenv, Environ: e.environ, Getwd: e.getwd, Hostname: e.hostname, Stdin: e.stdin}
}

// submitFailure makes submit's errors exit with $SLURM_EXIT_ERROR when it
// is set, as sbatch does, and 1 otherwise.
func submitFailure(env userEnv) func(error) error {
	code := sbatch.ExitCode(env.getenv)
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

// checkClusters takes -M as sbatch does with one cluster known: each name
// must be the controller's (Slurm 22.05 with slurmdbd refuses another
// with "No cluster 'other' known by database."). It returns the cluster
// submitted to, "" without -M.
func checkClusters(s *session, names []string) (string, error) {
	if len(names) == 0 {
		return "", nil
	}
	info, err := s.c.Info(s.ctx)
	if err != nil {
		return "", s.fail(err)
	}
	for _, n := range names {
		if n != info.GetName() {
			return "", fmt.Errorf("No cluster '%s' known by database. (--clusters: this controller is cluster %s)", n, info.GetName())
		}
	}
	return info.GetName(), nil
}
