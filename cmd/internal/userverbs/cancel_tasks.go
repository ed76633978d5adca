package userverbs

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/workflow"
)

// splitTaskRefs takes the array task ids ("20_3", "20_[1-3,7]") out of
// the job id words; a task list's commas stay inside its brackets.
func splitTaskRefs(verb string, words []string) (rest []string, refs []workflow.JobRef, err error) {
	for _, w := range words {
		if !strings.Contains(w, "_") {
			rest = append(rest, w)
			continue
		}
		ref, err := workflow.ParseJobRef(w)
		if err != nil {
			return nil, nil, usageError(verb, "%v", err)
		}
		refs = append(refs, ref)
	}
	return rest, refs, nil
}

// cancelTasks cancels array tasks, one request per reference.
func cancelTasks(cmd *cobra.Command, s *session, o *cancelOptions, refs []workflow.JobRef) (done []*pb.Job, failures []error) {
	jobs := pb.NewJobsClient(s.c.Conn())
	for _, ref := range refs {
		r, err := jobs.Cancel(s.ctx, &pb.CancelRequest{JobId: uint64(ref.Job), Tasks: ref.Tasks.String()})
		if err != nil {
			if o.quiet && status.Code(err) == codes.FailedPrecondition {
				continue
			}
			failures = append(failures, s.jobFail(uint64(ref.Job), err))
			continue
		}
		done = append(done, r.GetJob())
		if o.verbose {
			fmt.Fprintf(cmd.ErrOrStderr(), "parity: cancel: Terminating job %s\n", ref)
		}
	}
	return done, failures
}
