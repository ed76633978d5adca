package userverbs

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client/format"
)

type queueOptions struct {
	clientFlags
	format, formatLong        string
	users, jobs, partitions   []string
	states, accounts          []string
	name                      string
	noHeader, long, start, me bool
	array                     bool
}

func newQueueCmdWith(env userEnv) *cobra.Command {
	var o queueOptions
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "List queued and running jobs (squeue)",
		Long: `List jobs as squeue does: pending, running and completing jobs by default,
sorted by partition, state and priority. -o takes squeue's %-format codes
(%i %P %j %u %t %T %M %l %L %D %C %N %R %r %Q %S %V %e %a %q %E %b ...),
-O its field names (jobid,name:30,state:.10,...: 20 wide unless sized);
$SQUEUE_FORMAT (or $SQUEUE_FORMAT2, for -O) sets the default. -r prints
every array task on its own line. --start lists pending jobs by expected
start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runQueue(cmd, env, &o) },
	}
	noShortHelp(cmd)
	o.register(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&o.format, "format", "o", "", "output format (squeue -o codes)")
	fl.StringVarP(&o.formatLong, "Format", "O", "", "output fields by name (squeue -O: jobid,name:30,state:.10)")
	fl.StringArrayVarP(&o.users, "user", "u", nil, "only these users' jobs (comma list)")
	fl.StringArrayVarP(&o.jobs, "jobs", "j", nil, "only these job ids or array tasks (comma list: 12,20_3,20_[1-4])")
	fl.StringArrayVarP(&o.partitions, "partition", "p", nil, "only these partitions (comma list)")
	fl.StringArrayVarP(&o.states, "states", "t", nil, "only these states, long or compact (PD,R,CG...), or all")
	fl.StringArrayVarP(&o.accounts, "account", "A", nil, "only these accounts (comma list)")
	fl.StringVarP(&o.name, "name", "n", "", "only jobs with this name")
	fl.BoolVar(&o.me, "me", false, "only my jobs")
	fl.BoolVarP(&o.noHeader, "noheader", "h", false, "no header line")
	fl.BoolVarP(&o.long, "long", "l", false, "long layout (state and time limit)")
	fl.BoolVar(&o.start, "start", false, "pending jobs with their expected start times, soonest first")
	fl.BoolP("all", "a", false, "accepted for squeue compatibility (every partition is shown)")
	fl.BoolVarP(&o.array, "array", "r", false, "one line per array task, pending tasks too")
	return cmd
}

// layout picks squeue's: -O or -o, else --start's or -l's, else
// $SQUEUE_FORMAT, $SQUEUE_FORMAT2, the default. Like squeue, -o and -O
// together are an error.
func (o *queueOptions) layout(env userEnv) (format.Layout, error) {
	switch {
	case o.format != "" && o.formatLong != "":
		return format.Layout{}, fmt.Errorf("-O (--Format) is incompatible with -o (--format)")
	case o.formatLong != "":
		return format.ParseSqueueLongFormat(o.formatLong)
	case o.format != "":
		return format.ParseSqueueFormat(o.format)
	case o.start:
		return format.ParseSqueueFormat(format.SqueueStart)
	case o.long:
		return format.ParseSqueueFormat(format.SqueueLong)
	case env.getenv("SQUEUE_FORMAT") == "" && env.getenv("SQUEUE_FORMAT2") != "":
		return format.ParseSqueueLongFormat(env.getenv("SQUEUE_FORMAT2"))
	}
	return format.ParseSqueueFormat(cmp.Or(env.getenv("SQUEUE_FORMAT"), format.SqueueDefault))
}

func runQueue(cmd *cobra.Command, env userEnv, o *queueOptions) error {
	layout, err := o.layout(env)
	if err != nil {
		return usageError("queue", "%v", err)
	}
	warnLayout(cmd, layout)
	ids, refs, err := splitQueueIDs(o.jobs)
	if err != nil {
		return usageError("queue", "%v", err)
	}
	states, all, err := format.ParseJobStates(o.states)
	if err != nil {
		return usageError("queue", "%v", err)
	}
	if o.start {
		states, all = []string{"PENDING"}, false
	}
	s, err := o.dial(cmd, "queue", env)
	if err != nil {
		return err
	}
	defer s.close()
	f := &pb.ListJobsRequest{JobIds: ids, TaskRefs: refs, States: states, AllStates: all, Users: format.SplitList(o.users),
		Accounts: format.SplitList(o.accounts), Partitions: format.SplitList(o.partitions), Name: o.name}
	if o.me {
		who, err := s.c.WhoAmI(s.ctx)
		if err != nil {
			return s.fail(err)
		}
		f.Users = []string{who.GetUser()}
	}
	if len(ids)+len(refs) > 0 && len(states) == 0 {
		f.AllStates = true // squeue -j shows the named jobs whatever their state
	}
	jobs, err := s.c.ListJobs(s.ctx, f)
	if err != nil {
		return s.fail(err)
	}
	if len(jobs) == 0 && len(refs) == 0 && len(ids) == 1 && len(format.SplitList(o.jobs)) == 1 {
		if err := unknownJob(s, ids[0]); err != nil {
			return err
		}
	}
	format.SortJobs(jobs, o.start)
	if o.json {
		// The controller's records, as GET jobs answers them: an array's
		// remainder stays one record.
		return writeJobsJSON(s, cmd.OutOrStdout(), jobs)
	}
	// Like squeue, -l prints the time above the header (with -o too); -r
	// expands remainders after sorting, as squeue does when printing.
	render := env.render()
	if slices.ContainsFunc(jobs, notStarted) {
		if render.NodeCPUs, err = partitionNodeCPUs(s); err != nil {
			return s.fail(err)
		}
	}
	return format.Squeue(cmd.OutOrStdout(), jobs, layout, format.SqueueOptions{Env: render, NoHeader: o.noHeader, Date: o.long,
		Array: o.array || env.getenv("SQUEUE_ARRAY") != "", Users: systemUsers()})
}

// partitionNodeCPUs is each partition's CPUs per node, from the
// cluster's partitions (one small call): the node count slurmctld
// derives for a pending job (squeue's %D) depends on it.
func partitionNodeCPUs(s *session) (map[string]int, error) {
	info, err := s.c.Info(s.ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(info.GetPartitions()))
	for _, p := range info.GetPartitions() {
		if n := p.GetTotalNodes(); n > 0 {
			out[p.GetName()] = int(p.GetTotalCpus() / n)
		}
	}
	return out, nil
}

// unknownJob is squeue's answer to "-j ID" naming one job that came back
// empty: the error slurm_load_jobs gives when the controller does not know
// the id at all (never submitted, or purged; another user's job is
// answered alike). A job it still knows but the filters hid is an empty
// table, exit 0.
func unknownJob(s *session, id uint64) error {
	_, err := s.c.GetJob(s.ctx, id, false)
	if status.Code(err) != codes.NotFound {
		return nil
	}
	return unknownJobError(s, id)
}

// unknownJobError is the answer to a job id the controller does not know:
// Slurm's bare "slurm_load_jobs error: Invalid job id specified" under
// Slurm's names, the id named under Parity's.
func unknownJobError(s *session, id uint64) error {
	return &exitError{code: 1, err: fmt.Errorf("%s: invalid job id specified: %d", s.verb, id),
		slurmText: "slurm_load_jobs error: Invalid job id specified"}
}
