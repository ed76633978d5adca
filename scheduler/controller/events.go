package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/policy"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// Event kinds of the decision log.
const (
	EventStart    = cstate.KindStart
	EventEnd      = cstate.KindEnd
	EventCancel   = cstate.KindCancel
	EventRequeue  = cstate.KindRequeue
	EventPreempt  = "preempt"
	EventHold     = cstate.KindHold
	EventRelease  = cstate.KindRelease
	EventUpdate   = "update"
	EventNodeFail = cstate.KindNodeFail
	EventDrain    = "drain"
	EventResume   = "resume"
	EventDown     = "down"
	EventReclaim  = "reclaim"
	EventRegister = "register"
)

// record appends an event to the decision log (c.mu held) and returns the
// writes that make it durable, in the same commit as the change it explains.
// It also logs one structured line.
func (c *Controller) record(ev *pb.Event) []write {
	ev.Seq = c.st.nextSeq
	c.st.nextSeq++
	if ev.Time == nil {
		ev.Time = api.Timestamp(c.now())
	}
	val, err := proto.MarshalOptions{Deterministic: true}.Marshal(ev)
	if err != nil {
		c.log.Error("encode event", "kind", ev.Kind, "err", err)
		return nil
	}
	attrs := []any{"seq", ev.Seq, "kind", ev.Kind}
	if ev.JobId != 0 {
		attrs = append(attrs, "job", ev.JobId)
	}
	if ev.Node != "" {
		attrs = append(attrs, "node", ev.Node)
	}
	if len(ev.Nodes) > 0 {
		attrs = append(attrs, "nodes", ev.Nodes)
	}
	attrs = append(attrs, "actor", ev.Actor)
	if ev.Reason != "" {
		attrs = append(attrs, "reason", ev.Reason)
	}
	if ev.Detail != "" {
		attrs = append(attrs, "detail", ev.Detail)
	}
	c.log.Info("decision", attrs...)
	ws := []write{{bucket: bucketEvents, key: u64(ev.Seq), val: val}}
	if ev.JobId != 0 {
		ws = append(ws, write{bucket: bucketEventsByJob, key: append(u64(ev.JobId), u64(ev.Seq)...), val: []byte{}})
	}
	return ws
}

// jobEvent starts an event about a job, carrying its owner for filtering.
func jobEvent(kind string, j *job, actor string) *pb.Event {
	return &pb.Event{Kind: kind, JobId: uint64(j.Core.ID), Actor: actor,
		Fields: map[string]string{"user": j.Core.User, "partition": j.Core.Partition, "state": j.State}}
}

// factorsProto converts a priority breakdown.
func factorsProto(b *policy.Breakdown) *pb.PriorityFactors {
	if b == nil {
		return nil
	}
	return &pb.PriorityFactors{Total: b.Total, Age: b.Age, Fairshare: b.FairShare, Jobsize: b.JobSize, Partition: b.Partition,
		Qos: b.QOS, Tres: b.TRES, WeightedAge: b.Weighted.Age, WeightedFairshare: b.Weighted.FairShare,
		WeightedJobsize: b.Weighted.JobSize, WeightedPartition: b.Weighted.Partition, WeightedQos: b.Weighted.QOS,
		WeightedTres: b.Weighted.TRES, Nice: int32(b.Nice)}
}

// eventsStatus is the gRPC status of a failed decision-log read: the
// caller's own end (a cancelled or expired call) as that, else internal.
func eventsStatus(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Errorf(codes.Internal, "%v", err)
}

// eventFilter selects decision log entries.
type eventFilter struct {
	job          core.JobID
	node         string
	gpu          string // a device's UUID, in the event's "devices"
	kinds        []string
	since, until time.Time
	limit        int
	visible      func(*pb.Event) bool
}

// events reads the decision log (no lock needed: bbolt reads are
// snapshot-isolated). With a job it walks that job's index only. It first
// waits for the groups already applied to memory to be committed: the
// writer changes memory before it commits, so a caller that saw a job
// start would otherwise read a log without the start's record.
func (c *Controller) events(ctx context.Context, f eventFilter) ([]*pb.Event, error) {
	if err := c.fence.allFinished(ctx); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	var out []*pb.Event
	keep := func(ev *pb.Event) bool {
		t := api.Time(ev.GetTime())
		switch {
		case f.node != "" && ev.GetNode() != f.node && !slices.Contains(ev.GetNodes(), f.node):
		case f.gpu != "" && !slices.Contains(strings.Split(ev.GetFields()["devices"], ","), f.gpu):
		case len(f.kinds) > 0 && !slices.Contains(f.kinds, ev.GetKind()):
		case !f.since.IsZero() && t.Before(f.since):
		case !f.until.IsZero() && !t.Before(f.until):
		case f.visible != nil && !f.visible(ev):
		default:
			return true
		}
		return false
	}
	err := c.store.db.View(func(tx *bolt.Tx) error {
		evs := tx.Bucket(bucketEvents)
		decode := func(v []byte) (*pb.Event, error) {
			var ev pb.Event
			if err := proto.Unmarshal(v, &ev); err != nil {
				return nil, err
			}
			return &ev, nil
		}
		if f.job != 0 {
			prefix := u64(uint64(f.job))
			cur := tx.Bucket(bucketEventsByJob).Cursor()
			for k, _ := cur.Seek(prefix); k != nil && len(k) == 16 && string(k[:8]) == string(prefix); k, _ = cur.Next() {
				v := evs.Get(k[8:])
				if v == nil {
					continue
				}
				ev, err := decode(v)
				if err != nil {
					return err
				}
				if keep(ev) {
					out = append(out, ev)
				}
			}
			return nil
		}
		return evs.ForEach(func(_, v []byte) error {
			ev, err := decode(v)
			if err != nil {
				return err
			}
			if keep(ev) {
				out = append(out, ev)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%w: events: %w", ErrStore, err)
	}
	if f.limit > 0 && len(out) > f.limit {
		out = out[len(out)-f.limit:]
		slices.Reverse(out)
	}
	return out, nil
}

// expireEvents deletes decision log entries older than the retention
// (through the writer, like every other change). It returns how many went.
func (c *Controller) expireEventsWrites(cutoff time.Time) ([]write, int, error) {
	var ws []write
	err := c.store.db.View(func(tx *bolt.Tx) error {
		cur := tx.Bucket(bucketEvents).Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			var ev pb.Event
			if err := proto.Unmarshal(v, &ev); err != nil {
				return err
			}
			if !api.Time(ev.GetTime()).Before(cutoff) {
				break // sequence order is time order
			}
			ws = append(ws, write{bucket: bucketEvents, key: slices.Clone(k)})
			if ev.GetJobId() != 0 {
				ws = append(ws, write{bucket: bucketEventsByJob, key: append(u64(ev.GetJobId()), k...)})
			}
		}
		return nil
	})
	n := 0
	for _, w := range ws {
		if string(w.bucket) == string(bucketEvents) {
			n++
		}
	}
	return ws, n, err
}
