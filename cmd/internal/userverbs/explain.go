package userverbs

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/client/format"
)

func newExplainCmdWith(env userEnv) *cobra.Command {
	var cf clientFlags
	var history bool
	cmd := &cobra.Command{
		Use:   "explain JOBID",
		Short: "Say why a job is pending, when it should start and what would help",
		Long: `Explain a job the way the scheduler sees it: for a pending job its reason,
the facts behind it (nodes that do not fit and why, jobs ahead of it), its
priority factors, its expected start and what-if suggestions; for other jobs
their state. --history adds the job's decision log (submit, start,
preemption, requeue, ... with the inputs that decided each).`,
		Args: argsBetween(1, 1, "one job id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseJobIDs("explain", args)
			if err != nil {
				return err
			}
			if len(ids) != 1 {
				return usageError("explain", "give one job id")
			}
			s, err := cf.dial(cmd, "explain", env)
			if err != nil {
				return err
			}
			defer s.close()
			resp, err := s.c.ExplainJob(s.ctx, ids[0], history)
			if err != nil {
				return s.fail(err)
			}
			w := cmd.OutOrStdout()
			if cf.json {
				return writeMessageJSON(w, resp)
			}
			text := resp.GetText()
			if !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			if _, err := fmt.Fprint(w, text); err != nil {
				return err
			}
			if !history {
				return nil
			}
			fmt.Fprintln(w, "\nDecision log:")
			if len(resp.GetHistory()) == 0 {
				_, err := fmt.Fprintln(w, "  (no entries)")
				return err
			}
			l, err := format.ParseEventsFormat(format.EventsLayout)
			if err != nil {
				return err
			}
			return format.Events(w, resp.GetHistory(), l, env.render(), false)
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&history, "history", false, "add the job's decision log")
	return cmd
}
