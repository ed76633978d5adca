package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
)

// EventPartition is the decision log's record of an admin's partition
// change: who (actor), what (reason: create, update, delete), and the
// partition before and after (fields "before" and "after").
const EventPartition = "partition"

// ChangePartition is scontrol create|update|delete PartitionName=...:
// admins only; refusals in Slurm 22.05's words (as the anchor answered,
// testdata/slurm2205_partition.txt) change nothing.
func (s *clusterService) ChangePartition(ctx context.Context, req *pb.ChangePartitionRequest) (*pb.Partition, error) {
	c := s.c
	id := caller(ctx)
	action, name := req.GetAction(), req.GetName()
	if !id.Admin() {
		return nil, status.Errorf(codes.PermissionDenied, "Invalid user id: scontrol %s partition needs an admin (%s is not)", action, id.User)
	}
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "Invalid partition name specified: PartitionName= is empty")
	}
	var out *pb.Partition
	err := c.mutate(ctx, func() ([]write, func(), error) {
		list, before, after, err := c.partitionChangeLocked(action, name, req.GetSettings())
		if err != nil {
			return nil, nil, err
		}
		ws, err := partitionWrites(list, name, after == nil)
		if err != nil {
			return nil, nil, err
		}
		ev := &pb.Event{Kind: EventPartition, Actor: id.User, Reason: action,
			Fields: map[string]string{"partition": name, "before": partitionText(before), "after": partitionText(after)}}
		ev.Detail = fmt.Sprintf("%s partition %s: %s -> %s", action, name, ev.Fields["before"], ev.Fields["after"])
		ws = append(ws, c.record(ev)...)
		c.partitions.set(c.cfg, list)
		clear(c.st.caps)
		if after != nil {
			out = &pb.Partition{Name: after.Name, Nodes: after.Nodes, State: strings.ToLower(partState(after))}
		}
		return ws, c.trigger, nil
	})
	if err != nil {
		if _, ok := status.FromError(err); !ok {
			err = status.Errorf(codes.Unavailable, "%v", err)
		}
		return nil, err
	}
	if out == nil {
		out = &pb.Partition{}
	}
	return out, nil
}

// partitionChangeLocked computes the partition list after the change, and
// the partition before and after it (nil: none). c.mu held.
func (c *Controller) partitionChangeLocked(action, name string, settings []string) (list []config.Partition, before, after *config.Partition, err error) {
	cur := c.pcfg().Partitions
	i := slices.IndexFunc(cur, func(p config.Partition) bool { return p.Name == name })
	list = slices.Clone(cur)
	if i >= 0 {
		b := cur[i]
		before = &b
	}
	switch action {
	case "create":
		if i >= 0 {
			return nil, nil, nil, status.Errorf(codes.AlreadyExists, "Invalid partition name specified: partition %s exists", name)
		}
		if strings.ContainsAny(name, " ,=\x00") {
			return nil, nil, nil, status.Errorf(codes.InvalidArgument, "Invalid partition name specified: %q", name)
		}
		p := config.Partition{Name: name, State: "UP", PriorityTier: 1, PriorityJobFactor: 1, OverSubscribe: "NO"}
		if err := c.applyPartitionSettings(&p, settings); err != nil {
			return nil, nil, nil, err
		}
		list = append(list, p)
		after = &list[len(list)-1]
	case "update":
		if i < 0 {
			return nil, nil, nil, status.Errorf(codes.NotFound, "Invalid partition name specified: no partition %s", name)
		}
		if len(settings) == 0 {
			return nil, nil, nil, status.Error(codes.InvalidArgument, "No changes specified: name what to change after PartitionName=")
		}
		if err := c.applyPartitionSettings(&list[i], settings); err != nil {
			return nil, nil, nil, err
		}
		after = &list[i]
	case "delete":
		if i < 0 {
			return nil, nil, nil, status.Errorf(codes.NotFound, "Invalid partition name specified: no partition %s", name)
		}
		if err := c.partitionUnusedLocked(name, len(cur)); err != nil {
			return nil, nil, nil, err
		}
		list = slices.Delete(list, i, i+1)
	default:
		return nil, nil, nil, status.Errorf(codes.InvalidArgument, "action %q: want create, update or delete", action)
	}
	if after != nil && after.Default {
		for k := range list {
			list[k].Default = list[k].Name == name
		}
	}
	return list, before, after, nil
}

// partitionUnusedLocked refuses to delete a partition a job that has not
// ended runs in or may run in, as Slurm refuses it ("Partition is in
// use"), and the last partition, which every job falls back to.
func (c *Controller) partitionUnusedLocked(name string, count int) error {
	for _, j := range c.st.m.Active() {
		if finished(j.State) {
			continue
		}
		if j.Core.Partition == name || slices.Contains(j.Core.Partitions, name) {
			return status.Errorf(codes.FailedPrecondition, "Partition is in use: job %d (%s) is in partition %s", j.Core.ID, j.State, name)
		}
	}
	if count == 1 {
		return status.Errorf(codes.FailedPrecondition, "Partition is in use: %s is the only partition; create another first", name)
	}
	return nil
}

// partitionWrites is the table's durable form: every partition's record
// (their order may have shifted), and the deleted one's removal.
func partitionWrites(list []config.Partition, name string, deleted bool) ([]write, error) {
	ws := make([]write, 0, len(list)+1)
	for i, p := range list {
		v, err := json.Marshal(partRecord{Seq: i, Partition: p})
		if err != nil {
			return nil, fmt.Errorf("encode partition %s: %w", p.Name, err)
		}
		ws = append(ws, write{bucket: bucketPartitions, key: []byte(p.Name), val: v})
	}
	if deleted {
		ws = append(ws, write{bucket: bucketPartitions, key: []byte(name)})
	}
	return ws, nil
}
