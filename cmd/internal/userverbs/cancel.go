package userverbs

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client/format"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

type cancelOptions struct {
	clientFlags
	users, partitions, states, accounts []string
	name, signal                        string
	quiet, verbose, batch, full, me     bool
}

func newCancelCmdWith(env userEnv) *cobra.Command {
	var o cancelOptions
	cmd := &cobra.Command{
		Use:   "cancel [JOBID...]",
		Short: "Cancel or signal jobs (scancel)",
		Long: `Cancel jobs as scancel does: the jobs named, or every job matching the
filters (-u, -n, -p, -t, -A; with job ids, the named jobs that match).
--signal sends a signal to running jobs instead of cancelling them. Job ids
may be comma lists. Nothing is printed on success (-v says what was done).`,
		RunE: func(cmd *cobra.Command, args []string) error { return runCancel(cmd, env, &o, args) },
	}
	o.register(cmd)
	fl := cmd.Flags()
	fl.StringArrayVarP(&o.users, "user", "u", nil, "jobs of these users (comma list)")
	fl.StringVarP(&o.name, "name", "n", "", "jobs with this name")
	fl.StringVar(&o.name, "jobname", "", "same as --name")
	fl.StringArrayVarP(&o.partitions, "partition", "p", nil, "jobs in these partitions")
	fl.StringArrayVarP(&o.states, "state", "t", nil, "jobs in these states (PENDING, RUNNING...)")
	fl.StringArrayVarP(&o.accounts, "account", "A", nil, "jobs charged to these accounts")
	fl.StringVarP(&o.signal, "signal", "s", "", "send this signal (name or number) instead of cancelling")
	fl.BoolVar(&o.me, "me", false, "my jobs")
	fl.BoolVarP(&o.quiet, "quiet", "Q", false, "do not report signals to jobs that already ended (a cancel never does)")
	fl.BoolVarP(&o.verbose, "verbose", "v", false, "say what is done")
	fl.BoolVarP(&o.batch, "batch", "b", false, "accepted for scancel compatibility (the signal goes to the whole job)")
	fl.BoolVarP(&o.full, "full", "f", false, "accepted for scancel compatibility (the signal goes to the whole job)")
	return cmd
}

func (o *cancelOptions) filtered() bool {
	return len(o.users) > 0 || o.name != "" || len(o.partitions) > 0 || len(o.states) > 0 || len(o.accounts) > 0 || o.me
}

func runCancel(cmd *cobra.Command, env userEnv, o *cancelOptions, args []string) error {
	args, tasks, err := splitTaskRefs("cancel", args)
	if err != nil {
		return err
	}
	ids, err := parseJobIDs("cancel", args)
	if err != nil {
		return err
	}
	if len(tasks) > 0 && (o.signal != "" || o.filtered()) {
		return usageError("cancel", "array task ids take neither --signal nor filters yet (name the array's job id)")
	}
	if len(ids) == 0 && len(tasks) == 0 && !o.filtered() {
		return usageError("cancel", "no job identification provided (give job ids or a filter such as -u, -n, -p, -t)")
	}
	sig := int32(0)
	if o.signal != "" {
		if strings.ContainsAny(o.signal, ":@") {
			return usageError("cancel", "--signal=%q: want a signal name or number", o.signal)
		}
		parsed, err := jobspec.ParseSignal(o.signal)
		if err != nil {
			return usageError("cancel", "--signal=%q: %v", o.signal, err)
		}
		sig = int32(parsed.Number)
	}
	states, all, err := format.ParseJobStates(o.states)
	if err != nil {
		return usageError("cancel", "%v", err)
	}
	s, err := o.dial(cmd, "cancel", env)
	if err != nil {
		return err
	}
	defer s.close()
	targets := ids
	if o.filtered() {
		f := &pb.ListJobsRequest{JobIds: ids, States: states, AllStates: all, Users: format.SplitList(o.users),
			Accounts: format.SplitList(o.accounts), Partitions: format.SplitList(o.partitions), Name: o.name}
		if o.me {
			who, err := s.c.WhoAmI(s.ctx)
			if err != nil {
				return s.fail(err)
			}
			f.Users = []string{who.GetUser()}
		}
		jobs, err := s.c.ListJobs(s.ctx, f)
		if err != nil {
			return s.fail(err)
		}
		targets = targets[:0]
		for _, j := range jobs {
			targets = append(targets, j.GetId())
		}
	}
	done, failures := cancelTasks(cmd, s, o, tasks)
	for _, id := range targets {
		var j *pb.Job
		if sig != 0 {
			j, err = s.c.SignalJob(s.ctx, id, sig)
		} else {
			j, err = s.c.CancelJob(s.ctx, id)
		}
		if err != nil {
			// As Slurm's scancel: a job that already ended or is not
			// known is no error for a cancel (said only with -v), so
			// 'scancel $id' under set -e survives a job that finished;
			// a signal to one fails, quietly with -Q.
			gone := status.Code(err) == codes.FailedPrecondition || status.Code(err) == codes.NotFound
			switch {
			case gone && sig == 0:
				if o.verbose {
					fmt.Fprintln(cmd.ErrOrStderr(), voiceOf(cmd).Error("cancel", s.jobFail(id, err)))
				}
			case gone && o.quiet:
			default:
				failures = append(failures, s.jobFail(id, err))
			}
			continue
		}
		done = append(done, j)
		if o.verbose {
			what := "Terminating"
			if sig != 0 {
				what = fmt.Sprintf("Signal %d to", sig)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "parity: cancel: %s job %d\n", what, id)
		}
	}
	if o.json {
		if err := writeMessagesJSON(cmd.OutOrStdout(), "jobs", done); err != nil {
			return err
		}
	}
	return reportFailures(cmd, failures)
}

// reportFailures prints every failure but the last, which is returned so
// that the command exits non-zero with it.
func reportFailures(cmd *cobra.Command, failures []error) error {
	if len(failures) == 0 {
		return nil
	}
	for _, f := range failures[:len(failures)-1] {
		fmt.Fprintln(cmd.ErrOrStderr(), voiceOf(cmd).Error(cmd.Name(), f))
	}
	return failures[len(failures)-1]
}
