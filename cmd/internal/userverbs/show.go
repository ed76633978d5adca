package userverbs

import (
	"fmt"
	"io"
	"os/user"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client/format"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// showFlags are scontrol's display flags.
type showFlags struct {
	oneLiner bool
	details  bool
}

func (f *showFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&f.oneLiner, "oneliner", "o", false, "one line per record")
	cmd.Flags().BoolVarP(&f.details, "details", "d", false, "per-node allocation and per-GPU detail")
}

func newShowCmdWith(env userEnv) *cobra.Command {
	var cf clientFlags
	var sf showFlags
	cmd := &cobra.Command{
		Use:   "show job|node|partition|reservation [ID] | hostnames|hostlist EXPR",
		Short: "Show jobs, nodes or partitions as Key=Value records (scontrol show)",
		Long: `Show records as scontrol show does: "Key=Value" pairs, continuation lines
indented, a blank line after each record (-o: one line each). Without an ID
every job (recently finished ones included), node or partition is shown.
"show hostnames EXPR" expands a hostlist one name a line ($SLURM_JOB_NODELIST
when EXPR is omitted); "show hostlist a,b,c" compresses names.`,
		Args: argsBetween(1, 2, "job|node|partition [ID], or hostnames|hostlist EXPR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShow(cmd, env, &cf, sf, "show", args)
		},
	}
	cf.register(cmd)
	sf.register(cmd)
	return cmd
}

// showEntity normalises scontrol's entity words ("jobs", "JobId",
// "job=12" are all "job").
func showEntity(word string) (entity, id string, err error) {
	w, inline, _ := strings.Cut(word, "=")
	switch strings.ToLower(w) {
	case "job", "jobs", "jobid":
		return "job", inline, nil
	case "node", "nodes", "nodename":
		return "node", inline, nil
	case "partition", "partitions", "partitionname", "part":
		return "partition", inline, nil
	case "reservation", "reservations", "res", "resv", "reservationname":
		return "reservation", inline, nil
	case "hostnames", "hostname":
		return "hostnames", inline, nil
	case "hostlist", "hostlistsorted":
		return strings.ToLower(w), inline, nil
	}
	return "", "", fmt.Errorf("unknown entity %q (want job, node, partition, reservation, hostnames or hostlist)", word)
}

func runShow(cmd *cobra.Command, env userEnv, cf *clientFlags, sf showFlags, verb string, args []string) error {
	entity, id, err := showEntity(args[0])
	if err != nil {
		return usageError(verb, "%v", err)
	}
	if len(args) > 1 {
		id = args[1]
	}
	w := cmd.OutOrStdout()
	switch entity {
	case "hostnames":
		expr := id
		if expr == "" {
			expr = env.getenv("SLURM_JOB_NODELIST")
		}
		hosts, err := jobspec.ExpandHostlist(expr)
		if err != nil {
			return usageError(verb, "hostnames: %v", err)
		}
		for _, h := range hosts {
			fmt.Fprintln(w, h)
		}
		return nil
	case "hostlist", "hostlistsorted":
		hosts, err := jobspec.ExpandHostlist(id)
		if err != nil {
			return usageError(verb, "hostlist: %v", err)
		}
		if entity == "hostlistsorted" {
			_, err = fmt.Fprintln(w, jobspec.CompressHostlistSorted(hosts))
		} else {
			_, err = fmt.Fprintln(w, jobspec.CompressHostlist(hosts))
		}
		return err
	}
	if entity == "reservation" {
		var rest []string
		if id != "" {
			rest = []string{id}
		}
		return runReservation(cmd, env, cf, sf, verb, "show", rest)
	}
	s, err := cf.dial(cmd, verb, env)
	if err != nil {
		return err
	}
	defer s.close()
	o := format.ShowOptions{Env: env.render(), OneLiner: sf.oneLiner, Details: sf.details, Users: systemUsers()}
	switch entity {
	case "job":
		return showJobs(s, cf.json, o, w, id)
	case "node":
		var names []string
		if id != "" {
			names = []string{id}
		}
		nodes, err := s.c.ListNodes(s.ctx, &pb.ListNodesRequest{Names: names})
		if err != nil {
			return s.fail(err)
		}
		if id != "" && len(nodes) == 0 {
			return usageError(verb, "node %s not found", id)
		}
		if cf.json {
			return writeNodesJSON(s, w, nodes, nil)
		}
		return format.ShowNodes(w, nodes, o)
	}
	info, err := s.c.Info(s.ctx)
	if err != nil {
		return s.fail(err)
	}
	var parts []*pb.Partition
	for _, p := range info.GetPartitions() {
		if id == "" || p.GetName() == id {
			parts = append(parts, p)
		}
	}
	if id != "" && len(parts) == 0 {
		return usageError(verb, "invalid partition name specified: %s", id)
	}
	if cf.json {
		return slurmJSON(s, info).Partitions(w, parts)
	}
	return format.ShowPartitions(w, parts, o)
}

func showJobs(s *session, asJSON bool, o format.ShowOptions, w io.Writer, id string) error {
	var jobs []*pb.Job
	if id == "" {
		all, err := s.c.ListJobs(s.ctx, &pb.ListJobsRequest{AllStates: true})
		if err != nil {
			return s.fail(err)
		}
		jobs = all
	} else {
		ids, err := parseJobTargets(s.verb, []string{id})
		if err != nil {
			return err
		}
		for _, jid := range ids {
			if jid.task == nil {
				// An array's id shows every task, as Slurm's does.
				found, err := s.c.ListJobs(s.ctx, &pb.ListJobsRequest{JobIds: []uint64{jid.id}, AllStates: true})
				if err != nil {
					return s.fail(err)
				}
				if len(found) > 0 {
					jobs = append(jobs, found...)
					continue
				}
			}
			j, err := s.getTarget(jid)
			if status.Code(err) == codes.NotFound && jid.task == nil {
				return unknownJobError(s, jid.id)
			}
			if err != nil {
				return s.fail(err)
			}
			jobs = append(jobs, j)
		}
	}
	if asJSON {
		return writeJobsJSON(s, w, jobs)
	}
	// The nodes name -d's GPUs, the memory a job asking for none gets (a
	// whole node's, which TRES= shows as Slurm does) and the CPUs a node
	// holds (NumNodes of a job whose tasks need several).
	if o.Details || slices.ContainsFunc(jobs, notStarted) {
		nodes, err := s.c.ListNodes(s.ctx, nil)
		if err != nil {
			return s.fail(err)
		}
		o.Nodes = make(map[string]*pb.Node, len(nodes))
		for _, n := range nodes {
			o.Nodes[n.GetName()] = n
		}
	}
	return format.ShowJobs(w, jobs, o)
}

// notStarted reports a job holding no nodes yet.
func notStarted(j *pb.Job) bool { return len(j.GetAlloc()) == 0 }

// systemUsers resolves job owners through the login node's user database
// (shared with the compute nodes, as Slurm assumes), each name once.
func systemUsers() func(string) (format.UserIDs, bool) {
	type entry struct {
		ids format.UserIDs
		ok  bool
	}
	seen := map[string]entry{}
	return func(name string) (format.UserIDs, bool) {
		if e, ok := seen[name]; ok {
			return e.ids, e.ok
		}
		var e entry
		if u, err := user.Lookup(name); err == nil {
			e.ok = true
			e.ids = format.UserIDs{UID: u.Uid, Group: "N/A", GID: u.Gid}
			if g, err := user.LookupGroupId(u.Gid); err == nil {
				e.ids.Group = g.Name
			}
		}
		seen[name] = e
		return e.ids, e.ok
	}
}
