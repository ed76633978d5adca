package userverbs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client/format"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

func newUpdateCmdWith(env userEnv) *cobra.Command {
	var cf clientFlags
	var force bool
	cmd := &cobra.Command{
		Use:   "update JobId=ID KEY=VALUE... | NodeName=NODES State=STATE [Reason=TEXT] [Devices=LIST]",
		Short: "Change pending jobs or drain/resume nodes (scontrol update)",
		Long: `Change jobs or nodes as scontrol update does.

Jobs: JobId=12[,13] (or an array task, JobId=20_3) with TimeLimit= (a duration; +N or -N minutes changes the
current limit), Nice=, Partition=, QOS=, JobName=, Comment=, Account=.
Nodes: NodeName=gpu[001-004] State=DRAIN|DOWN|RESUME|UNDRAIN with Reason=
(required to drain or down a node); Devices=0,3 (indices or UUIDs) limits the
change to those GPUs of one node. Node=N Gpu=K Partitions=3g.40gb+2g.20gb+1g.10gb
(or 7x1g.10gb, cpx, none) re-partitions one GPU: it is drained at once, split
anew by its driver when no job holds it or any of its partitions (with --force,
or Force=yes, those jobs are requeued, or cancelled when they may not be) and
returned to service once the node reports the new partitions. Nothing is
printed on success.`,
		Args: argsBetween(1, -1, "JobId=ID KEY=VALUE... or NodeName=NODES State=STATE [Reason=TEXT]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if force {
				args = append(args, "Force=yes")
			}
			return runUpdate(cmd, env, &cf, "update", args)
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&force, "force", false, "with Partitions=: requeue the GPU's jobs instead of waiting for them")
	return cmd
}

// updatePlan is a parsed scontrol update: job changes or a node change.
type updatePlan struct {
	jobIDs []jobTarget
	job    *pb.UpdateJobRequest // fields to set on every job in jobIDs
	// timeDelta is TimeLimit=+N/-N: added to each job's current limit.
	timeDelta time.Duration
	node      *pb.UpdateNodeRequest
}

// Job fields scontrol can change that Parity does not (yet).
var unsupportedJobKeys = []string{"numnodes", "numcpus", "numtasks", "minmemorynode", "minmemorycpu", "features", "dependency",
	"starttime", "priority", "reqnodelist", "excnodelist", "gres", "tres", "arraytaskthrottle", "deadline", "eligibletime",
	"requeue", "reservation", "mincpusnode", "contiguous", "oversubscribe", "wckey", "stdout", "stderr", "workdir"}

// parseUpdate reads scontrol update's Key=Value words (keys in any case).
// A word without '=' continues the previous Reason or Comment.
func parseUpdate(words []string) (*updatePlan, error) {
	type pair struct{ key, value string }
	var pairs []pair
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			if n := len(pairs); n > 0 && (pairs[n-1].key == "reason" || pairs[n-1].key == "comment") {
				pairs[n-1].value += " " + w
				continue
			}
			return nil, fmt.Errorf("invalid input %q: want Key=Value", w)
		}
		pairs = append(pairs, pair{strings.ToLower(k), v})
	}
	p := &updatePlan{}
	job := &pb.UpdateJobRequest{}
	node := &pb.UpdateNodeRequest{}
	isJob, isNode := false, false
	for _, kv := range pairs {
		var err error
		switch kv.key {
		case "jobid":
			isJob = true
			p.jobIDs, err = jobTargetList([]string{kv.value})
		case "timelimit":
			err = setTimeLimit(p, job, kv.value)
		case "nice":
			var n int
			n, err = strconv.Atoi(kv.value)
			job.Nice = proto.Int32(int32(n))
		case "partition":
			job.Partition = proto.String(kv.value)
		case "qos":
			job.Qos = proto.String(kv.value)
		case "jobname", "name":
			job.Name = proto.String(kv.value)
		case "comment":
			job.Comment = proto.String(kv.value)
		case "account":
			job.Account = proto.String(kv.value)
		case "nodename", "nodes", "node":
			isNode = true
			node.Nodes = kv.value
		case "state":
			node.State = strings.ToUpper(kv.value)
		case "reason":
			node.Reason = kv.value
		case "devices", "gpus", "gpu":
			node.Devices = format.SplitList([]string{kv.value})
		case "partitions":
			node.Partitions, err = parseLayout(kv.value)
			if node.State == "" {
				node.State = "PARTITION"
			}
		case "force":
			node.Force, err = parseYes(kv.value)
		default:
			for _, u := range unsupportedJobKeys {
				if kv.key == u {
					return nil, fmt.Errorf("update of %s is not supported", kv.key)
				}
			}
			return nil, fmt.Errorf("unknown parameter %q", kv.key)
		}
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", kv.key, kv.value, err)
		}
	}
	jobFields := !proto.Equal(job, &pb.UpdateJobRequest{}) || p.timeDelta != 0
	nodeFields := node.State != "" || node.Reason != "" || len(node.Devices) > 0 || len(node.Partitions) > 0 || node.Force
	switch {
	case isJob && isNode:
		return nil, fmt.Errorf("JobId and NodeName cannot be updated together")
	case isJob && nodeFields:
		return nil, fmt.Errorf("State, Reason and Devices apply to nodes (NodeName=), not jobs")
	case isNode && jobFields:
		return nil, fmt.Errorf("job fields cannot be set on NodeName=%s", node.Nodes)
	case isJob:
		if !jobFields {
			return nil, fmt.Errorf("nothing to change for JobId=%s", joinIDs(p.jobIDs))
		}
		p.job = job
		return p, nil
	case isNode:
		return p, checkNodeUpdate(node, p)
	}
	return nil, fmt.Errorf("no JobId= or NodeName= given")
}

func checkNodeUpdate(node *pb.UpdateNodeRequest, p *updatePlan) error {
	switch node.State {
	case "DRAIN", "DOWN", "FAIL":
		if strings.TrimSpace(node.Reason) == "" {
			return fmt.Errorf("you must specify a reason when DOWNING or DRAINING a node (Reason=...)")
		}
	case "RESUME", "UNDRAIN", "IDLE":
	case "PARTITION":
		if len(node.Devices) != 1 {
			return fmt.Errorf("Partitions=: name exactly one GPU of one node (Gpu=K), got %d", len(node.Devices))
		}
	case "":
		return fmt.Errorf("NodeName=%s: State= is required (DRAIN, DOWN, RESUME or UNDRAIN)", node.Nodes)
	default:
		return fmt.Errorf("State=%s: invalid node state (want DRAIN, DOWN, RESUME, UNDRAIN or PARTITION)", node.State)
	}
	if len(node.Partitions) > 0 && node.State != "PARTITION" {
		return fmt.Errorf("Partitions= re-partitions a GPU; it cannot be combined with State=%s", node.State)
	}
	if node.Force && node.State != "PARTITION" {
		return fmt.Errorf("Force= goes with Partitions= (re-partitioning a GPU), not State=%s", node.State)
	}
	if node.State == "FAIL" {
		node.State = "DRAIN" // FAIL is drain with intent; Parity keeps one kind
	}
	if node.State == "IDLE" {
		node.State = "RESUME"
	}
	p.node = node
	return nil
}

// parseYes reads a yes/no value (yes, no, true, false, 1, 0).
func parseYes(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "yes", "true", "1":
		return true, nil
	case "no", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("want yes or no")
}

// parseLayout reads Partitions=: partition types joined by "+" or ","
// ("3g.40gb+2g.20gb+1g.10gb", "7x1g.10gb" for seven of one, "cpx"), or
// "none"/"whole" for an unpartitioned GPU (an empty layout).
func parseLayout(v string) ([]string, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "none" || v == "whole" {
		return nil, nil
	}
	var out []string
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == '+' || r == ',' }) {
		n, typ := 1, part
		if count, rest, ok := strings.Cut(part, "x"); ok {
			if k, err := strconv.Atoi(count); err == nil {
				if k < 1 || k > 64 {
					return nil, fmt.Errorf("%q: a count must be 1 to 64", part)
				}
				n, typ = k, rest
			}
		}
		if typ == "" {
			return nil, fmt.Errorf("%q: no partition type", part)
		}
		for range n {
			out = append(out, typ)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no partition types (use none for a whole GPU)")
	}
	return out, nil
}

// setTimeLimit reads TimeLimit=: a duration, or +N/-N to change the
// current limit by that much.
func setTimeLimit(p *updatePlan, job *pb.UpdateJobRequest, v string) error {
	sign := int64(0)
	switch {
	case strings.HasPrefix(v, "+"):
		sign, v = 1, v[1:]
	case strings.HasPrefix(v, "-"):
		sign, v = -1, v[1:]
	}
	d, err := jobspec.ParseTimeLimit(v)
	if err != nil {
		return err
	}
	if sign != 0 {
		p.timeDelta = time.Duration(sign) * d
		return nil
	}
	secs := int64(d / time.Second)
	if d == jobspec.Unlimited {
		secs = -1
	}
	job.TimeLimitSeconds = proto.Int64(secs)
	return nil
}

func joinIDs(ids []jobTarget) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return strings.Join(s, ",")
}

func runUpdate(cmd *cobra.Command, env userEnv, cf *clientFlags, verb string, args []string) error {
	plan, err := parseUpdate(args)
	if err != nil {
		return usageError(verb, "%v", err)
	}
	s, err := cf.dial(cmd, verb, env)
	if err != nil {
		return err
	}
	defer s.close()
	w := cmd.OutOrStdout()
	if plan.node != nil {
		nodes, err := s.c.UpdateNodes(s.ctx, plan.node)
		if err != nil {
			return s.fail(err)
		}
		if cf.json {
			return writeMessagesJSON(w, "nodes", nodes)
		}
		return nil
	}
	var done []*pb.Job
	var failures []error
	for _, id := range plan.jobIDs {
		req := proto.CloneOf(plan.job)
		req.JobId, req.ArrayTaskId = id.id, id.task
		if plan.timeDelta != 0 {
			cur, err := s.getTarget(id)
			if err != nil {
				failures = append(failures, s.targetFail(id, err))
				continue
			}
			req.TimeLimitSeconds = proto.Int64(cur.GetTimeLimitSeconds() + int64(plan.timeDelta/time.Second))
		}
		j, err := s.c.UpdateJob(s.ctx, req)
		if err != nil {
			failures = append(failures, s.targetFail(id, err))
			continue
		}
		done = append(done, j)
	}
	if cf.json {
		if err := writeMessagesJSON(w, "jobs", done); err != nil {
			return err
		}
	}
	return reportFailures(cmd, failures)
}
