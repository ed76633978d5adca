package userverbs

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client/format"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

type eventsOptions struct {
	clientFlags
	job                     string
	node, gpu, since, until string
	kinds                   []string
	limit                   int
	format                  string
	noHeader                bool
}

func newEventsCmdWith(env userEnv) *cobra.Command {
	var o eventsOptions
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Read the decision log: starts, preemptions, requeues, drains, resumes, reclaims",
		Long: `Read the controller's decision log, oldest first: every start, end,
cancellation, preemption, requeue, hold, drain, resume, down and reclamation
with who or what decided it and why. Filter by job, node, GPU, kind and time;
--since and --until take Slurm times (2025-06-02T09:00, now, today, ...) or
a duration meaning that long ago (90m, 2h, 3d is not a Go duration: use 72h).
--limit N shows the newest N, newest first. Users see node events and their
own jobs' events; operators see everything.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEvents(cmd, env, &o) },
	}
	o.register(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&o.job, "job", "j", "", "only this job's events")
	fl.StringVarP(&o.node, "node", "N", "", "only events about this node")
	fl.StringVar(&o.gpu, "gpu", "", "only events about this GPU (its UUID): health verdicts, drains and resumes of it, repartitions")
	fl.StringArrayVarP(&o.kinds, "kind", "k", nil, "only these kinds (start, end, cancel, requeue, preempt, hold, release, update, drain, resume, down, reclaim, node_fail, register)")
	fl.StringVarP(&o.since, "since", "S", "", "events at or after this time")
	fl.StringVarP(&o.until, "until", "E", "", "events before this time")
	fl.IntVarP(&o.limit, "limit", "n", 0, "the newest N events, newest first")
	fl.StringVarP(&o.format, "format", "o", format.EventsLayout, "output format (T time, s seq, k kind, j job, n nodes, a actor, r reason, d detail, v verdict, p alternatives)")
	fl.BoolVar(&o.noHeader, "noheader", false, "no header line")
	return cmd
}

// eventTime reads --since/--until: a duration ago, or a Slurm time.
func eventTime(flag, v string, env userEnv) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	now := env.now()
	if d, err := time.ParseDuration(v); err == nil {
		return now.Add(-d), nil
	}
	t, err := jobspec.ParseTime(v, now, env.loc)
	if err != nil {
		return time.Time{}, usageError("events", "%s=%q: %v", flag, v, err)
	}
	return t, nil
}

func runEvents(cmd *cobra.Command, env userEnv, o *eventsOptions) error {
	l, err := format.ParseEventsFormat(o.format)
	if err != nil {
		return usageError("events", "%v", err)
	}
	req := &pb.EventsRequest{Node: o.node, Gpu: o.gpu, Kinds: format.SplitList(o.kinds), Limit: int32(o.limit)}
	if o.limit < 0 {
		return usageError("events", "--limit=%d: must not be negative", o.limit)
	}
	for _, k := range req.Kinds {
		if strings.ContainsAny(k, " \t") {
			return usageError("events", "--kind=%q: not a kind", k)
		}
	}
	if o.job != "" {
		ids, err := parseJobIDs("events", []string{o.job})
		if err != nil {
			return err
		}
		if len(ids) != 1 {
			return usageError("events", "--job takes one job id")
		}
		req.JobId = ids[0]
	}
	since, err := eventTime("--since", o.since, env)
	if err != nil {
		return err
	}
	until, err := eventTime("--until", o.until, env)
	if err != nil {
		return err
	}
	req.Since, req.Until = api.Timestamp(since), api.Timestamp(until)
	s, err := o.dial(cmd, "events", env)
	if err != nil {
		return err
	}
	defer s.close()
	evs, err := s.c.Events(s.ctx, req)
	if err != nil {
		return s.fail(err)
	}
	if o.json {
		return writeMessagesJSON(cmd.OutOrStdout(), "events", evs)
	}
	return format.Events(cmd.OutOrStdout(), evs, l, env.render(), o.noHeader)
}
