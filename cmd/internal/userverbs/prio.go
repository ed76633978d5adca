package userverbs

import (
	"github.com/spf13/cobra"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client/format"
)

type prioOptions struct {
	clientFlags
	jobs, users, partitions           []string
	noHeader, long, norm, weights, me bool
	format                            string
}

func newPrioCmdWith(env userEnv) *cobra.Command {
	var o prioOptions
	cmd := &cobra.Command{
		Use:   "prio",
		Short: "Show pending jobs' priority factors (sprio)",
		Long: `Show the multifactor priority of pending jobs as sprio does: the weighted
age, fair-share, job size, partition, QOS and TRES factors and their sum;
factors whose weight is 0 are left out. -n shows them normalised, -l prints
every factor with user and nice, -o takes sprio's format codes, -w prints
the configured weights.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPrio(cmd, env, &o) },
	}
	noShortHelp(cmd)
	o.register(cmd)
	fl := cmd.Flags()
	fl.StringArrayVarP(&o.jobs, "jobs", "j", nil, "only these job ids (comma list)")
	fl.StringArrayVarP(&o.users, "user", "u", nil, "only these users' jobs")
	fl.StringArrayVarP(&o.partitions, "partition", "p", nil, "only jobs in these partitions")
	fl.BoolVarP(&o.noHeader, "noheader", "h", false, "no header line")
	fl.BoolVarP(&o.long, "long", "l", false, "add user and nice")
	fl.BoolVarP(&o.norm, "norm", "n", false, "normalised factors (0..1) instead of weighted ones")
	fl.BoolVarP(&o.weights, "weights", "w", false, "print the configured weights")
	fl.BoolVar(&o.me, "me", false, "only my jobs")
	fl.StringVarP(&o.format, "format", "o", "", "sprio's %-format codes (%i %r %u %Y %S %A %B %F %J %P %Q %N %T, lower case normalised)")
	return cmd
}

func runPrio(cmd *cobra.Command, env userEnv, o *prioOptions) error {
	ids, err := parseJobIDs("prio", o.jobs)
	if err != nil {
		return err
	}
	s, err := o.dial(cmd, "prio", env)
	if err != nil {
		return err
	}
	defer s.close()
	req := &pb.PriorityRequest{JobIds: ids, Users: format.SplitList(o.users), Partitions: format.SplitList(o.partitions)}
	if o.me {
		who, err := s.c.WhoAmI(s.ctx)
		if err != nil {
			return s.fail(err)
		}
		req.Users = []string{who.GetUser()}
	}
	resp, err := s.c.Priority(s.ctx, req)
	if err != nil {
		return s.fail(err)
	}
	w := cmd.OutOrStdout()
	if o.json {
		return writeMessageJSON(w, resp)
	}
	so := format.SprioOptions{NoHeader: o.noHeader, Long: o.long, Normalized: o.norm, Format: o.format}
	if o.weights {
		return format.SprioWeights(w, resp.GetWeights(), so)
	}
	return format.Sprio(w, resp, so)
}
