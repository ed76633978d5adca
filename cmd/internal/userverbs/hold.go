package userverbs

import (
	"github.com/spf13/cobra"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// jobAction is one of hold, release or requeue applied to a job.
type jobAction func(s *session, t jobTarget) (*pb.Job, error)

func holdAction(s *session, t jobTarget) (*pb.Job, error) {
	if t.task != nil {
		return s.c.HoldTask(s.ctx, t.id, *t.task)
	}
	return s.c.HoldJob(s.ctx, t.id)
}

func releaseAction(s *session, t jobTarget) (*pb.Job, error) {
	if t.task != nil {
		return s.c.ReleaseTask(s.ctx, t.id, *t.task)
	}
	return s.c.ReleaseJob(s.ctx, t.id)
}

func requeueAction(hold bool) jobAction {
	return func(s *session, t jobTarget) (*pb.Job, error) {
		if t.task != nil {
			return s.c.RequeueTask(s.ctx, t.id, *t.task, hold)
		}
		return s.c.RequeueJob(s.ctx, t.id, hold)
	}
}

func newHoldCmdWith(env userEnv) *cobra.Command {
	return jobActionCmd(env, "hold JOBID...", "Hold pending jobs (scontrol hold)",
		`Hold pending jobs: they stay queued but are not scheduled (reason
JobHeldUser; JobHeldAdmin when an operator holds another user's job) until
released. Job ids may be comma lists and array task ids (20_3, 20_[1-4]);
a task still waiting in its array is split off to be held, as in Slurm.`, func(bool) jobAction { return holdAction })
}

func newReleaseCmdWith(env userEnv) *cobra.Command {
	return jobActionCmd(env, "release JOBID...", "Release held jobs (scontrol release)",
		`Release held jobs so they can be scheduled again. An administrator's hold
can only be released by an operator or admin. Array task ids (20_3) work.`, func(bool) jobAction { return releaseAction })
}

func newRequeueCmdWith(env userEnv) *cobra.Command {
	cmd := jobActionCmd(env, "requeue JOBID...", "Put running or ended batch jobs back in the queue (scontrol requeue)",
		`Put batch jobs back in the queue with the same job id: a running or
suspended job is stopped first; one that ended (completed, failed,
cancelled, timed out, ...) pends again at once, as in Slurm. Either way it
restarts from the top of its script. --hold keeps them held once requeued
(scontrol requeuehold). Pending jobs, salloc/srun allocations and
--no-requeue jobs are refused.`, requeueAction)
	cmd.Flags().Bool("hold", false, "hold the jobs once requeued (requeuehold)")
	return cmd
}

// jobActionCmd builds a verb that applies an action to each job named.
// actionFor receives the --hold flag (requeue only).
func jobActionCmd(env userEnv, use, short, long string, actionFor func(hold bool) jobAction) *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  argsBetween(1, -1, "one or more job ids"),
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		hold, _ := cmd.Flags().GetBool("hold")
		return runJobAction(cmd, env, &cf, cmd.Name(), args, actionFor(hold))
	}
	cf.register(cmd)
	return cmd
}

func runJobAction(cmd *cobra.Command, env userEnv, cf *clientFlags, verb string, args []string, act jobAction) error {
	ids, err := parseJobTargets(verb, args)
	if err != nil {
		return err
	}
	s, err := cf.dial(cmd, verb, env)
	if err != nil {
		return err
	}
	defer s.close()
	var done []*pb.Job
	var failures []error
	for _, id := range ids {
		j, err := act(s, id)
		if err != nil {
			failures = append(failures, s.targetFail(id, err))
			continue
		}
		done = append(done, j)
	}
	if cf.json {
		if err := writeMessagesJSON(cmd.OutOrStdout(), "jobs", done); err != nil {
			return err
		}
	}
	return reportFailures(cmd, failures)
}

func suspendAction(s *session, t jobTarget) (*pb.Job, error) {
	return s.c.SuspendJob(s.ctx, t.id, t.task)
}
func resumeAction(s *session, t jobTarget) (*pb.Job, error) {
	return s.c.ResumeJob(s.ctx, t.id, t.task)
}

func newSuspendCmdWith(env userEnv) *cobra.Command {
	return jobActionCmd(env, "suspend JOBID...", "Stop running jobs without ending them (scontrol suspend; operators and admins)",
		`Suspend running jobs: their processes are stopped (SIGSTOP), they keep
their nodes, GPUs and memory, and their time limit does not run until they are
resumed. State SUSPENDED (squeue: S). Job ids may be comma lists and array task ids.`,
		func(bool) jobAction { return suspendAction })
}

func newResumeCmdWith(env userEnv) *cobra.Command {
	return jobActionCmd(env, "resume JOBID...", "Continue suspended jobs (scontrol resume; operators and admins)",
		`Resume suspended jobs: their processes continue (SIGCONT) and their time
limit is extended by the time they were suspended.`, func(bool) jobAction { return resumeAction })
}
