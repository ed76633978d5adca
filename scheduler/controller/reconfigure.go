package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
)

// Reconfigure is scontrol reconfigure: the cluster file is read and
// checked whole before anything changes. What may change at run time is
// applied (the partitions, as Slurm's reconfigure re-reads them: made,
// changed and removed to match the file, each change logged like an
// admin's); every other section that differs is named as needing a
// restart, since the running controller reads it only at its start.
func (s *clusterService) Reconfigure(ctx context.Context, _ *pb.ReconfigureRequest) (*pb.ReconfigureResponse, error) {
	c := s.c
	id := caller(ctx)
	if !id.Admin() {
		return nil, status.Errorf(codes.PermissionDenied, "Invalid user id: scontrol reconfigure needs an admin (%s is not)", id.User)
	}
	if c.opts.LoadConfig == nil {
		return nil, status.Error(codes.FailedPrecondition, "this controller was started without a cluster file to read again")
	}
	next, err := c.opts.LoadConfig()
	if err == nil {
		err = next.CoreConfig().Validate()
	}
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "the cluster file was not applied, nothing changed: %v", err)
	}
	out := &pb.ReconfigureResponse{Restart: restartSections(c.cfg, next)}
	err = c.mutate(ctx, func() ([]write, func(), error) {
		ws, applied, err := c.reconfigurePartitionsLocked(id.User, next.Partitions)
		if err != nil {
			return nil, nil, err
		}
		out.Applied = applied
		return ws, c.trigger, nil
	})
	if err != nil {
		if _, ok := status.FromError(err); !ok {
			err = status.Errorf(codes.Unavailable, "%v", err)
		}
		return nil, err
	}
	return out, nil
}

// reconfigurePartitionsLocked puts the file's partitions in force: the
// writes (records, removals, decision log) and what changed. A partition
// the file drops that a live job is in, or one naming a node this
// controller does not have (nodes change with a restart), refuses the
// whole reconfigure. c.mu held.
func (c *Controller) reconfigurePartitionsLocked(user string, file []config.Partition) ([]write, []string, error) {
	cur := c.pcfg().Partitions
	for _, p := range file {
		for _, n := range p.NodeNames {
			if c.st.nodes[n] == nil {
				return nil, nil, status.Errorf(codes.FailedPrecondition,
					"the cluster file was not applied, nothing changed: partition %s names node %s, which this controller has not (new nodes take a restart)", p.Name, n)
			}
		}
	}
	var ws []write
	var applied []string
	for i := range cur {
		if slices.ContainsFunc(file, func(p config.Partition) bool { return p.Name == cur[i].Name }) {
			continue
		}
		if err := c.partitionUnusedLocked(cur[i].Name, 2); err != nil {
			return nil, nil, status.Errorf(codes.FailedPrecondition, "the cluster file was not applied, nothing changed: it drops partition %s: %s",
				cur[i].Name, status.Convert(err).Message())
		}
		ws = append(ws, write{bucket: bucketPartitions, key: []byte(cur[i].Name)})
		ws = append(ws, c.partitionEvent(user, "delete", &cur[i], nil)...)
		applied = append(applied, "partition "+cur[i].Name+" deleted")
	}
	for i := range file {
		p := &file[i]
		j := slices.IndexFunc(cur, func(q config.Partition) bool { return q.Name == p.Name })
		switch {
		case j < 0:
			ws = append(ws, c.partitionEvent(user, "create", nil, p)...)
			applied = append(applied, "partition "+p.Name+" created")
		case !partitionSame(&cur[j], p):
			ws = append(ws, c.partitionEvent(user, "update", &cur[j], p)...)
			applied = append(applied, "partition "+p.Name+" updated")
		}
		v, err := json.Marshal(partRecord{Seq: i, Partition: *p})
		if err != nil {
			return nil, nil, fmt.Errorf("encode partition %s: %w", p.Name, err)
		}
		ws = append(ws, write{bucket: bucketPartitions, key: []byte(p.Name), val: v})
	}
	c.partitions.set(c.cfg, file)
	clear(c.st.caps)
	return ws, applied, nil
}

// partitionEvent is the decision log record of one partition change.
func (c *Controller) partitionEvent(user, action string, before, after *config.Partition) []write {
	name := ""
	if before != nil {
		name = before.Name
	} else {
		name = after.Name
	}
	ev := &pb.Event{Kind: EventPartition, Actor: user, Reason: action,
		Fields: map[string]string{"partition": name, "before": partitionText(before), "after": partitionText(after), "via": "reconfigure"}}
	ev.Detail = fmt.Sprintf("reconfigure: %s partition %s: %s -> %s", action, name, ev.Fields["before"], ev.Fields["after"])
	return c.record(ev)
}

// partitionSame reports whether two partitions say the same.
func partitionSame(a, b *config.Partition) bool {
	return partitionText(a) == partitionText(b) && a.MinNodes == b.MinNodes && a.MaxNodes == b.MaxNodes &&
		a.DefMemPerCPU == b.DefMemPerCPU && a.BillingWeights == b.BillingWeights
}

// restartSections names the file's sections, other than the partitions,
// that differ from what the controller runs with. Accounts and QOS (and
// the limits built from them) are not among them: like partitions they
// are run-time state, which only sacctmgr changes after the first start,
// as Slurm's reconfigure leaves slurmdbd's associations alone.
func restartSections(run, file *config.Cluster) []string {
	var out []string
	sections := []struct {
		name     string
		run, now any
	}{
		{"cluster", run.Name, file.Name}, {"controller", run.Controller, file.Controller}, {"auth", run.Auth, file.Auth},
		{"admins", run.Admins, file.Admins}, {"operators", run.Operators, file.Operators}, {"nodes", run.NodeSets, file.NodeSets},
		{"priority", run.Priority, file.Priority},
		{"scheduler", run.Scheduler, file.Scheduler}, {"health", run.Health, file.Health}, {"reclamation", run.Reclamation, file.Reclamation},
		{"nodeDownTimeout", run.NodeDownTimeout, file.NodeDownTimeout}, {"heartbeatInterval", run.HeartbeatInterval, file.HeartbeatInterval},
		{"eventRetention", run.EventRetention, file.EventRetention}, {"minJobAge", run.MinJobAge, file.MinJobAge},
		{"requeueOnNodeFail", run.RequeueOnNodeFail, file.RequeueOnNodeFail},
		{"jobLimits", run.JobLimits, file.JobLimits},
	}
	for _, s := range sections {
		if !reflect.DeepEqual(s.run, s.now) {
			out = append(out, s.name)
		}
	}
	// Billing weights are read once, at the start.
	for _, p := range file.Partitions {
		if q, ok := run.Partition(p.Name); !ok && p.BillingWeights != "" || ok && q.BillingWeights != p.BillingWeights {
			out = append(out, "partitions."+p.Name+".billingWeights")
		}
	}
	return out
}
