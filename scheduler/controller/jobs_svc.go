package controller

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

type jobsService struct {
	pb.UnimplementedJobsServer
	c *Controller
}

// Submit validates, then queues the job through the group-commit writer;
// it answers only after the job is durable.
func (s *jobsService) Submit(ctx context.Context, req *pb.SubmitRequest) (*pb.SubmitResponse, error) {
	c := s.c
	id := caller(ctx)
	if req.GetSpec() == nil {
		return nil, status.Error(codes.InvalidArgument, "submit: no job spec")
	}
	if err := niceAllowed(id, "--nice", req.GetSpec().GetNice()); err != nil {
		return nil, err
	}
	if err := checkSubmitKey(req.GetIdempotencyKey()); err != nil {
		return nil, err
	}
	prep, err := c.prepareKeyed(id.User, req.GetIdempotencyKey(), req.GetSpec())
	if err != nil {
		return nil, err
	}
	if req.GetTestOnly() {
		return c.willRun(prep), nil
	}
	if err := checkNodeCount(prep.job.spec); err != nil {
		return nil, err
	}
	jid, err := c.submitPrepared(ctx, prep)
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return nil, err // a refusal (MaxJobCount), in the controller's words
		}
		return nil, status.Errorf(codes.Unavailable, "submit: %v", err)
	}
	return &pb.SubmitResponse{JobId: uint64(jid), Message: fmt.Sprintf("Submitted batch job %d", jid), Warnings: prep.notes}, nil
}

// prepared is a validated submission waiting for an id.
type prepared struct {
	job *job
	// rec is the durable record encoded without its id, after idRoom
	// spare bytes: insertLocked writes the id field into the tail of that
	// room, so the writer neither encodes nor copies under the lock.
	rec  []byte
	cold []byte // script, env and argv
	// keys holds the job key and the next-id value (8 bytes each) and ws
	// the job's three writes, allocated with the rest of the submission.
	keys [16]byte
	ws   [3]write
	// notes are warnings for the submitter (a listed partition dropped).
	notes []string
}

// idRoom fits the id field: a one-byte tag and a varint of up to 10 bytes.
const idRoom = 1 + binary.MaxVarintLen64

// prepareSubmit is the in-memory submit path outside the writer: resolve
// defaults, validate against the cluster, build and encode the record. It
// takes ownership of spec (a request message gRPC decoded for this call).
func (c *Controller) prepareSubmit(user string, spec *pb.JobSpec) (*prepared, error) {
	return c.prepareKeyed(user, "", spec)
}

// prepareKeyed is prepareSubmit for a submission with an idempotency key.
func (c *Controller) prepareKeyed(user, key string, spec *pb.JobSpec) (*prepared, error) {
	if err := checkSpecInput(spec, c.cfg.JobLimits); err != nil {
		return nil, err
	}
	cold := encodeCold(spec.GetScript(), spec.GetEnv(), spec.GetArgv())
	spec.Script, spec.Env, spec.Argv = "", nil, nil
	c.mu.Lock()
	notes, err := c.resolveSpec(user, spec, func(p *config.Partition) partCaps { return c.capacities(p) })
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	cj, err := coreJob(0, user, spec, c.now())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	if cj.TimeLimit == 0 {
		// The effective limit is fixed at submit, as Slurm does; a job
		// listing partitions whose defaults differ gets it when it starts.
		cj.TimeLimit = c.defaultLimit(cj.Partitions, cj.Partition)
	}
	j := &job{Job: cstate.Job{Core: cj, State: StatePending, Reason: string(core.ReasonNone)}, spec: spec}
	if err := prepareArray(j, c.cfg.JobLimits.MaxArraySize); err != nil {
		return nil, err
	}
	c.mu.Lock()
	more, err := c.checkSubmitLimitsLocked(j)
	notes = append(notes, more...)
	if err == nil {
		err = c.checkJobReservationLocked(&j.Core)
	}
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	j.submitKey = key
	rec, err := j.marshalAfter(make([]byte, idRoom, idRoom+256))
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "submit: %v", err)
	}
	return &prepared{job: j, rec: rec, cold: cold, notes: notes}, nil
}

// submitPrepared assigns the id and commits the job; a submission whose
// key created a job already is answered by that job, writing nothing.
func (c *Controller) submitPrepared(ctx context.Context, p *prepared) (core.JobID, error) {
	var jid core.JobID
	err := c.mutate(ctx, func() ([]write, func(), error) {
		if id, ok := c.st.submittedAs(p.job.submitKey); ok {
			jid = id
			return nil, nil, nil
		}
		id, ws, err := c.insertLocked(p)
		if err != nil {
			return nil, nil, err
		}
		jid = id
		c.st.rememberKey(p.job.submitKey, id)
		// Read under the lock: a pass may start the job (and set the
		// partition it got) before this after func runs.
		user, partition := p.job.Core.User, p.job.Core.Partition
		return ws, func() {
			c.metrics.submitted.Inc()
			c.log.Info("job state", "job", id, "user", user, "partition", partition, "state", StatePending)
			c.trigger()
		}, nil
	})
	return jid, err
}

// insertLocked submits the job to the state machine, which assigns the
// next id and checks MaxJobCount where the table grows (so concurrent
// submissions cannot pass it together), and returns the writes that make
// it durable (c.mu held). The submit time is the command's time.
func (c *Controller) insertLocked(p *prepared) (core.JobID, []write, error) {
	st := c.st
	j := p.job
	if _, err := st.m.Apply(cstate.Submit[*job]{Job: j}, j.Core.Submit); err != nil {
		return 0, nil, stateStatus(err)
	}
	jid := j.Core.ID
	if j.array != nil {
		j.array.ID = jid
	}
	// Field 1 (id) first, then the rest: protobuf merges fields in any
	// order. The field goes at the end of the room before the record.
	var id [idRoom]byte
	field := protowire.AppendVarint(protowire.AppendTag(id[:0], 1, protowire.VarintType), uint64(jid))
	start := idRoom - len(field)
	copy(p.rec[start:], field)
	val := p.rec[start:]
	if j.array != nil {
		j.arrayCold = p.cold
	}
	key, next := p.keys[:8:8], p.keys[8:]
	binary.BigEndian.PutUint64(key, uint64(jid))
	binary.BigEndian.PutUint64(next, uint64(st.m.NextID()))
	p.ws = [3]write{{bucket: bucketJobs, key: key, val: val}, {bucket: bucketScripts, key: key, val: p.cold},
		{bucket: bucketMeta, key: keyNextID, val: next}}
	return jid, p.ws[:], nil
}

func (s *jobsService) Get(ctx context.Context, req *pb.GetJobRequest) (*pb.Job, error) {
	c := s.c
	id := caller(ctx)
	c.mu.Lock()
	var j *job
	var rec *pb.Job
	var err error
	if req.ArrayTaskId != nil {
		// A task split off is its own job; one still in the array shows
		// the array's record under the task's name.
		var h *job
		if j, h, err = c.findTaskLocked(id, req.GetJobId(), req.GetArrayTaskId()); err == nil && j == nil {
			j, rec = h, taskRecord(h, req.GetArrayTaskId())
		}
	} else {
		j, err = c.jobForLocked(id, req.GetJobId())
	}
	if err == nil && rec == nil {
		rec = j.record()
	}
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if !req.GetWithScript() {
		return rec, nil
	}
	c.mu.Lock()
	allowed := canReadScript(id, j)
	c.mu.Unlock()
	if !allowed {
		return nil, status.Errorf(codes.PermissionDenied, "access/permission denied: the script and environment of job %d are shown only to its owner and admins", req.GetJobId())
	}
	cold, err := c.store.script(j.Core.ID)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	spec := proto.CloneOf(rec.Spec)
	spec.Script, spec.Env, spec.Argv = cold.GetScript(), cold.GetEnv(), cold.GetArgv()
	rec.Spec = spec
	return rec, nil
}

// List streams the jobs the filter selects, in id order, in messages
// under the chunk bound.
func (s *jobsService) List(req *pb.ListJobsRequest, stream grpc.ServerStreamingServer[pb.ListJobsResponse]) error {
	resp, err := s.list(stream.Context(), req)
	if err != nil {
		return err
	}
	return sendChunks(resp.GetJobs(), s.c.listChunkBytes(), func(jobs []*pb.Job) error {
		return stream.Send(&pb.ListJobsResponse{Jobs: jobs})
	})
}

func (s *jobsService) list(ctx context.Context, req *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
	c := s.c
	id := caller(ctx)
	users := visibleUsers(id, req.GetUsers())
	states := map[string]bool{}
	for _, st := range req.GetStates() {
		states[strings.ToUpper(st)] = true
	}
	if len(states) == 0 && !req.GetAllStates() {
		states = map[string]bool{StatePending: true, StateRunning: true, StateCompleting: true, StateSuspended: true}
	}
	match := func(j *job) bool {
		switch {
		case len(states) > 0 && !states[j.State]:
		case len(users) > 0 && !slices.Contains(users, j.Core.User):
		case len(req.GetAccounts()) > 0 && !slices.Contains(req.GetAccounts(), j.Core.Account):
		case len(req.GetPartitions()) > 0 && !j.inPartition(req.GetPartitions()):
		case req.GetName() != "" && req.GetName() != j.Core.Name:
		default:
			return true
		}
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*pb.Job
	add := func(j *job) bool {
		if j != nil && match(j) {
			out = append(out, j.record())
		}
		return req.GetLimit() <= 0 || len(out) < int(req.GetLimit())
	}
	if len(req.GetJobIds()) > 0 || len(req.GetTaskRefs()) > 0 {
		ids := slices.Clone(req.GetJobIds())
		slices.Sort(ids)
		ids = slices.Compact(ids)
		for _, jid := range ids {
			j := c.st.jobs[core.JobID(jid)]
			if !add(j) {
				return &pb.ListJobsResponse{Jobs: out}, nil
			}
			if j == nil || j.array == nil {
				continue
			}
			// An array's id names every task, as in squeue -j: those
			// split off into jobs of their own too.
			for _, t := range j.array.Tasks() {
				if t.JobID != j.Core.ID && !slices.Contains(ids, uint64(t.JobID)) && !add(c.st.jobs[t.JobID]) {
					return &pb.ListJobsResponse{Jobs: out}, nil
				}
			}
		}
		err := c.listTasksLocked(id, req.GetTaskRefs(), match, func(p *pb.Job) bool {
			out = append(out, p)
			return req.GetLimit() <= 0 || len(out) < int(req.GetLimit())
		})
		if err != nil {
			return nil, err
		}
		return &pb.ListJobsResponse{Jobs: out}, nil
	}
	if !req.GetAllStates() && !states[StateCompleted] && len(states) <= 4 && !slices.ContainsFunc(sortedKeys(states), finished) {
		// Live states only: the active list is already in id order.
		for _, j := range c.st.m.Active() {
			if !add(j) {
				break
			}
		}
		return &pb.ListJobsResponse{Jobs: out}, nil
	}
	ids := make([]core.JobID, 0, len(c.st.jobs))
	for jid := range c.st.jobs {
		ids = append(ids, jid)
	}
	slices.Sort(ids)
	for _, jid := range ids {
		if !add(c.st.jobs[jid]) {
			break
		}
	}
	return &pb.ListJobsResponse{Jobs: out}, nil
}
