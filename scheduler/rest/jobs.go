package rest

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// collect is the server side of a streaming call run in process: every
// message the service sends goes to send.
type collect[T any] struct {
	ctx  context.Context
	send func(*T) error
}

func (s *collect[T]) Send(m *T) error              { return s.send(m) }
func (s *collect[T]) Context() context.Context     { return s.ctx }
func (s *collect[T]) SetHeader(metadata.MD) error  { return nil }
func (s *collect[T]) SendHeader(metadata.MD) error { return nil }
func (s *collect[T]) SetTrailer(metadata.MD)       {}
func (s *collect[T]) SendMsg(any) error {
	return status.Error(codes.Internal, "rest: SendMsg on an in-process stream")
}
func (s *collect[T]) RecvMsg(any) error {
	return status.Error(codes.Internal, "rest: RecvMsg on an in-process stream")
}

var _ grpc.ServerStreamingServer[pb.ListJobsResponse] = (*collect[pb.ListJobsResponse])(nil)

// listJobs runs Jobs.List in process and returns every job it sent.
func (h *Handler) listJobs(c *call, req *pb.ListJobsRequest) ([]*pb.Job, error) {
	var out []*pb.Job
	err := h.b.Jobs.List(req, &collect[pb.ListJobsResponse]{ctx: c.ctx, send: func(m *pb.ListJobsResponse) error {
		out = append(out, m.GetJobs()...)
		return nil
	}})
	return out, err
}

// queryFlags checks the flags parameter; every value the document allows
// reads the same in Parity (no federation, no hidden partitions).
func queryFlags(c *call) error {
	switch f := c.r.URL.Query().Get("flags"); f {
	case "", "ALL", "DETAIL", "MIXED", "LOCAL", "SIBLING", "FEDERATION", "FUTURE":
		return nil
	default:
		return status.Errorf(codes.InvalidArgument, "flags=%q: want one of ALL, DETAIL, MIXED, LOCAL, SIBLING, FEDERATION, FUTURE", f)
	}
}

// updateTime reads update_time (a UNIX time; 0 when absent).
func updateTime(c *call) (int64, error) {
	v := c.r.URL.Query().Get("update_time")
	if v == "" {
		return 0, nil
	}
	t, err := strconv.ParseInt(v, 10, 64)
	if err != nil || t < 0 {
		return 0, status.Errorf(codes.InvalidArgument, "update_time=%q: want a UNIX time in seconds", v)
	}
	return t, nil
}

// lastChange is the latest time Parity records for a job: submission,
// eligibility, start, suspension or end.
func lastChange(j *pb.Job) int64 {
	t := int64(0)
	for _, ts := range []interface{ GetSeconds() int64 }{j.GetSubmitTime(), j.GetEligibleTime(), j.GetStartTime(), j.GetSuspendTime(), j.GetEndTime()} {
		t = max(t, ts.GetSeconds())
	}
	return t
}

func (h *Handler) jobsAnswer(c *call, jobs []*pb.Job, since int64) (*jobInfoResp, error) {
	info, err := h.b.Cluster.Info(c.ctx, &pb.InfoRequest{})
	if err != nil {
		return nil, err
	}
	out := &jobInfoResp{Jobs: make([]*jobInfo, 0, len(jobs)), LastBackfill: epoch(info.GetLastPass()), LastUpdate: num(h.b.Now().Unix())}
	for _, j := range jobs {
		if since == 0 || lastChange(j) > since {
			out.Jobs = append(out.Jobs, toJobInfo(j, h.b.ClusterName))
		}
	}
	return out, nil
}

func serveJobs(h *Handler, c *call) (any, error) {
	since, err := updateTime(c)
	if err == nil {
		err = queryFlags(c)
	}
	if err != nil {
		return nil, err
	}
	return h.streamJobs(c, &pb.ListJobsRequest{AllStates: true}, since)
}

// jobRef reads a job id as slurmrestd takes it: 42, or 42_3 for a task.
func jobRef(v string) (uint64, *int32, error) {
	id, task, isTask := strings.Cut(v, "_")
	jid, err := strconv.ParseUint(id, 10, 32)
	if err != nil || jid == 0 {
		return 0, nil, status.Errorf(codes.InvalidArgument, "job_id=%q: want a job id (42) or an array task (42_3)", v)
	}
	if !isTask {
		return jid, nil, nil
	}
	t, err := strconv.ParseInt(task, 10, 32)
	if err != nil || t < 0 {
		return 0, nil, status.Errorf(codes.InvalidArgument, "job_id=%q: array task %q is not a non-negative integer", v, task)
	}
	t32 := int32(t)
	return jid, &t32, nil
}

func serveJobsState(h *Handler, c *call) (any, error) {
	var ids []uint64
	var refs []string
	if v := c.r.URL.Query().Get("job_id"); v != "" {
		for _, s := range strings.Split(v, ",") {
			jid, task, err := jobRef(strings.TrimSpace(s))
			if err != nil {
				return nil, err
			}
			if task != nil {
				refs = append(refs, strings.TrimSpace(s))
			} else {
				ids = append(ids, jid)
			}
		}
	}
	jobs, err := h.listJobs(c, &pb.ListJobsRequest{AllStates: true, JobIds: ids, TaskRefs: refs})
	if err != nil {
		return nil, err
	}
	out, err := h.jobsAnswer(c, nil, 0)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		ji := &jobInfo{JobID: int64(j.GetId()), JobState: jobState(j), StateReason: reason(j), ArrayJobID: num(0), ArrayTaskID: unset()}
		if j.GetArrayTask() || j.GetArrayJobId() != 0 {
			ji.ArrayJobID, ji.ArrayTaskID = num(int64(j.GetArrayJobId())), num(int64(j.GetArrayTaskId()))
		}
		out.Jobs = append(out.Jobs, ji)
	}
	return out, nil
}

func serveJob(h *Handler, c *call) (any, error) {
	if _, err := updateTime(c); err != nil {
		return nil, err
	}
	if err := queryFlags(c); err != nil {
		return nil, err
	}
	jid, task, err := jobRef(c.r.PathValue("job_id"))
	if err != nil {
		return nil, err
	}
	j, err := h.b.Jobs.Get(c.ctx, &pb.GetJobRequest{JobId: jid, ArrayTaskId: task})
	if err != nil {
		return nil, err
	}
	return h.jobsAnswer(c, []*pb.Job{j}, 0)
}

// jobUpdate is the part of v0.0.44_job_desc_msg a job update honours.
type jobUpdate struct {
	Account   *string  `json:"account"`
	Comment   *string  `json:"comment"`
	Hold      *bool    `json:"hold"`
	Name      *string  `json:"name"`
	Nice      *int32   `json:"nice"`
	Partition *string  `json:"partition"`
	QOS       *string  `json:"qos"`
	TimeLimit *noValIn `json:"time_limit"`
}

func serveJobUpdate(h *Handler, c *call) (any, error) {
	jid, task, err := jobRef(c.r.PathValue("job_id"))
	if err != nil {
		return nil, err
	}
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	var u jobUpdate
	if err := decodeObject(c, body, "job", jobDescProps(), &u, true); err != nil {
		return nil, err
	}
	req := &pb.UpdateJobRequest{JobId: jid, ArrayTaskId: task, Account: u.Account, Comment: u.Comment, Name: u.Name,
		Nice: u.Nice, Partition: u.Partition, Qos: u.QOS}
	if u.TimeLimit != nil {
		sec, err := minutes("job.time_limit", u.TimeLimit, -1)
		if err != nil {
			return nil, err
		}
		req.TimeLimitSeconds = &sec
	}
	changes := req.Account != nil || req.Comment != nil || req.Name != nil || req.Nice != nil || req.Partition != nil ||
		req.Qos != nil || req.TimeLimitSeconds != nil
	if !changes && u.Hold == nil {
		return nil, status.Error(codes.InvalidArgument, "job: the update names nothing to change")
	}
	if changes {
		if _, err := h.b.Jobs.Update(c.ctx, req); err != nil {
			return nil, err
		}
	}
	if u.Hold != nil {
		ref := &pb.JobRef{JobId: jid, ArrayTaskId: task}
		if *u.Hold {
			_, err = h.b.Jobs.Hold(c.ctx, ref)
		} else {
			_, err = h.b.Jobs.Release(c.ctx, ref)
		}
		if err != nil {
			return nil, err
		}
	}
	return &jobPostResp{Results: []jobPostResult{{JobID: int64(jid), Why: "Job updated"}}}, nil
}

func serveJobDelete(h *Handler, c *call) (any, error) {
	jid, task, err := jobRef(c.r.PathValue("job_id"))
	if err != nil {
		return nil, err
	}
	q := c.r.URL.Query()
	switch f := q.Get("flags"); f {
	case "", "FULL_JOB", "BATCH_JOB", "VERBOSE":
	default:
		return nil, status.Errorf(codes.InvalidArgument, "flags=%s: Parity signals whole jobs only (FULL_JOB, BATCH_JOB, VERBOSE)", f)
	}
	req := &pb.CancelRequest{JobId: jid}
	if task != nil {
		req.Tasks = strconv.Itoa(int(*task))
	}
	if v := q.Get("signal"); v != "" {
		sig, ok := signalNumber(v)
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "signal=%q: not a signal name (KILL, TERM, USR1) or number", v)
		}
		if sig != 9 { // SIGKILL is scancel's default: the job is cancelled
			req.Signal = sig
		}
	}
	if _, err := h.b.Jobs.Cancel(c.ctx, req); err != nil {
		return nil, err
	}
	return &killResp{Status: []struct{}{}}, nil
}

// submitReq is v0.0.44_job_submit_req.
type submitReq struct {
	Script *string           `json:"script"`
	Job    json.RawMessage   `json:"job"`
	Jobs   []json.RawMessage `json:"jobs"`
}

func serveSubmit(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	var req submitReq
	if err := decodeObject(c, body, "job_submit_req", submitReqProps(), &req, true); err != nil {
		return nil, err
	}
	if len(req.Jobs) > 0 {
		return nil, status.Error(codes.Unimplemented, "job_submit_req.jobs: heterogeneous jobs are not supported by Parity; give job")
	}
	if len(req.Job) == 0 || string(req.Job) == "null" {
		return nil, status.Error(codes.InvalidArgument, "job_submit_req: job is required")
	}
	var d jobDesc
	if err := decodeObject(c, req.Job, "job", jobDescProps(), &d, false); err != nil {
		return nil, err
	}
	spec, err := d.spec(deref(req.Script))
	if err != nil {
		return nil, err
	}
	resp, err := h.b.Jobs.Submit(c.ctx, &pb.SubmitRequest{Spec: spec})
	if err != nil {
		return nil, err
	}
	for _, w := range resp.GetWarnings() {
		c.warn("job", "%s", w)
	}
	return &submitResp{JobID: int64(resp.GetJobId()), StepID: "batch", UserMsg: resp.GetMessage()}, nil
}
