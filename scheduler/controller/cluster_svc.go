package controller

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
)

type clusterService struct {
	pb.UnimplementedClusterServer
	c *Controller
}

func (s *clusterService) Info(ctx context.Context, _ *pb.InfoRequest) (*pb.ClusterInfo, error) {
	c := s.c
	id := caller(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &pb.ClusterInfo{Name: c.cfg.Name, Version: c.opts.Version, JobsByState: map[string]int32{}, NodesByState: map[string]int32{},
		LastPass: api.Timestamp(c.st.lastPass), LastPassDuration: durationpb.New(c.st.lastPassDur), Started: api.Timestamp(c.started)}
	if id.Operator() {
		out.NextJobId = uint64(c.st.m.NextID())
	}
	rp := c.cfg.Reclamation.Policy
	out.Reclamation = &pb.ReclamationPolicy{Enabled: c.cfg.Reclamation.Enabled, DryRun: rp.DryRun, IdleFor: durationpb.New(rp.IdleFor),
		Grace: durationpb.New(rp.Grace), MinRuntime: durationpb.New(rp.MinRuntime), Action: string(rp.Mode), ExemptAccounts: rp.ExemptAccounts}
	for _, j := range c.st.jobs {
		if canSee(id, j) {
			out.JobsByState[j.State]++
		}
	}
	nodeState := map[string]*pb.Node{}
	partsOf := c.partitionsByNode()
	for _, name := range c.st.names {
		p := c.nodeProtoIn(c.st.nodes[name], partsOf[name])
		nodeState[name] = p
		out.NodesByState[p.GetDisplayState()]++
	}
	for _, p := range c.pcfg().Partitions {
		pp := &pb.Partition{Name: p.Name, Nodes: p.Nodes, Default: p.Default, MaxTimeSeconds: int64(p.MaxTime.Seconds()),
			DefaultTimeSeconds: int64(p.DefaultTime.Seconds()), TotalNodes: int32(len(p.NodeNames)),
			PriorityTier: int32(p.PriorityTier), PriorityJobFactor: int32(p.PriorityJobFactor), NodeNames: p.NodeNames,
			MinNodes: int32(p.MinNodes), MaxNodes: int32(p.MaxNodes), DefMemPerCpuMb: p.DefMemPerCPU, BillingWeights: p.BillingWeights,
			PreemptMode: c.preemptModeText(), GraceTimeSeconds: int64(c.cfg.Scheduler.PreemptGraceTime.Seconds()),
			State: strings.ToLower(partState(&p)), AllowAccounts: p.AllowAccounts, DenyAccounts: p.DenyAccounts,
			AllowQos: p.AllowQOS, DenyQos: p.DenyQOS, OverSubscribe: p.OverSubscribe}
		for _, n := range p.NodeNames {
			if np := nodeState[n]; np != nil {
				pp.TotalCpus += np.GetCpus()
				pp.TotalMemoryMb += np.GetMemoryMb()
				pp.TotalGpus += int32(len(np.GetGpus()))
			}
		}
		out.Partitions = append(out.Partitions, pp)
	}
	return out, nil
}

// Events streams the decision log's events in messages under the chunk
// bound.
func (s *clusterService) Events(req *pb.EventsRequest, stream grpc.ServerStreamingServer[pb.EventsResponse]) error {
	resp, err := s.events(stream.Context(), req)
	if err != nil {
		return err
	}
	return sendChunks(resp.GetEvents(), s.c.listChunkBytes(), func(evs []*pb.Event) error {
		return stream.Send(&pb.EventsResponse{Events: evs})
	})
}

func (s *clusterService) events(ctx context.Context, req *pb.EventsRequest) (*pb.EventsResponse, error) {
	c := s.c
	id := caller(ctx)
	// Another user's job is not refused: its entries are filtered out, so
	// the answer is the empty one an id never used gets (jobForLocked).
	evs, err := c.events(ctx, eventFilter{job: core.JobID(req.GetJobId()), node: req.GetNode(), gpu: req.GetGpu(), kinds: req.GetKinds(),
		since: api.Time(req.GetSince()), until: api.Time(req.GetUntil()), limit: int(req.GetLimit()), visible: eventVisible(id)})
	if err != nil {
		return nil, eventsStatus(err)
	}
	return &pb.EventsResponse{Events: evs}, nil
}

// Priority streams pending jobs' priorities from the last pass (sprio)
// in messages under the chunk bound; the first carries the weights.
func (s *clusterService) Priority(req *pb.PriorityRequest, stream grpc.ServerStreamingServer[pb.PriorityResponse]) error {
	resp, err := s.priority(stream.Context(), req)
	if err != nil {
		return err
	}
	weights := resp.GetWeights()
	return sendChunks(resp.GetJobs(), s.c.listChunkBytes(), func(jobs []*pb.JobPriority) error {
		err := stream.Send(&pb.PriorityResponse{Jobs: jobs, Weights: weights})
		weights = nil
		return err
	})
}

func (s *clusterService) priority(ctx context.Context, req *pb.PriorityRequest) (*pb.PriorityResponse, error) {
	c := s.c
	id := caller(ctx)
	users := visibleUsers(id, req.GetUsers())
	w := c.coreCfg.Priority.Weights
	out := &pb.PriorityResponse{Weights: &pb.PriorityWeights{Age: w.Age, Fairshare: w.FairShare, Jobsize: w.JobSize, Partition: w.Partition, Qos: w.QOS, Tres: w.TRES}}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, j := range c.st.m.Active() {
		switch {
		case j.State != StatePending || j.Core.Hold != core.HoldNone: // sprio leaves held jobs out, as Slurm's does
		case len(req.GetJobIds()) > 0 && !slices.Contains(req.GetJobIds(), uint64(j.Core.ID)):
		case len(users) > 0 && !slices.Contains(users, j.Core.User):
		case len(req.GetPartitions()) > 0 && !j.inPartition(req.GetPartitions()):
		default:
			out.Jobs = append(out.Jobs, &pb.JobPriority{JobId: uint64(j.Core.ID), Partition: j.partitionText(), User: j.Core.User,
				Account: j.Core.Account, Qos: j.Core.QOS, Factors: factorsFor(j)})
		}
	}
	return out, nil
}

func (s *clusterService) WhoAmI(ctx context.Context, _ *pb.WhoAmIRequest) (*pb.Identity, error) {
	id := caller(ctx)
	return &pb.Identity{User: id.User, Role: string(id.Role), Node: id.Node}, nil
}

// preemptModeText is PreemptMode as scontrol shows it: OFF without a
// preemption type, else the mode in upper case.
func (c *Controller) preemptModeText() string {
	if c.cfg.Scheduler.PreemptType == "" {
		return "OFF"
	}
	return strings.ToUpper(cmp.Or(c.cfg.Scheduler.PreemptMode, "off"))
}
