package rest

import (
	"fmt"
	"net/http"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// killJobsMsg is the part of v0.0.44_kill_jobs_msg Parity honours; the
// filters it cannot apply (qos, reservation, wckey, nodes, user_id) are
// refused by name, so no job is signalled that the caller did not select.
type killJobsMsg struct {
	Account   *string  `json:"account"`
	Flags     []string `json:"flags"`
	JobName   *string  `json:"job_name"`
	Jobs      []string `json:"jobs"`
	Partition *string  `json:"partition"`
	Signal    *string  `json:"signal"`
	JobState  []string `json:"job_state"`
	UserName  *string  `json:"user_name"`
}

func killJobsProps() map[string]bool {
	return setOf("account", "flags", "job_name", "jobs", "partition", "qos", "reservation", "signal", "job_state",
		"user_id", "user_name", "wckey", "nodes")
}

func (m *killJobsMsg) filtered() bool {
	return m.Account != nil || m.JobName != nil || m.Partition != nil || len(m.JobState) > 0 || m.UserName != nil
}

// target is one job (or array tasks of one) to signal.
type target struct {
	id    uint64
	tasks string
}

// serveJobsDelete is scancel over a list and filters, as the CLI's cancel
// does it: the filters select through Jobs.List (a user who names no user
// selects their own jobs), then each job goes through Jobs.Cancel, whose
// rules decide who may signal what. A job that already ended is no failure
// of a cancel, as for scancel; one the caller cannot see is (not found). Failures are reported one error per job in the
// envelope: the document's status entries list "error/string" and its
// siblings as required property names, which no answer can satisfy, so
// status stays empty (see killResp).
func serveJobsDelete(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	m, sig, err := decodeKillJobs(c, body)
	if err != nil {
		return nil, err
	}
	targets, err := h.killTargets(c, m)
	if err != nil {
		return nil, err
	}
	out := &killResp{Status: []struct{}{}}
	code := http.StatusOK
	for _, t := range targets {
		_, err := h.b.Jobs.Cancel(c.ctx, &pb.CancelRequest{JobId: t.id, Signal: sig, Tasks: t.tasks})
		ended := status.Code(err) == codes.FailedPrecondition
		if err == nil || (ended && sig == 0) {
			continue
		}
		st := statusOf(err)
		if code == http.StatusOK {
			code = httpStatus(st.Code())
		}
		out.Errors = append(out.Errors, apiErr{Description: fmt.Sprintf("job %d: %s", t.id, st.Message()),
			ErrorNumber: slurmErrno(st.Code(), "/job/"), Error: errorName(st.Code()), Source: c.op.method + " " + c.op.path})
	}
	h.writeBody(c, code, out)
	return nil, nil
}

// decodeKillJobs reads a kill_jobs_msg: the jobs and filters, and the
// signal (0: cancel). Every job named must read as a job reference.
func decodeKillJobs(c *call, body []byte) (*killJobsMsg, int32, error) {
	var m killJobsMsg
	if err := decodeObject(c, body, "kill_jobs_msg", killJobsProps(), &m, true); err != nil {
		return nil, 0, err
	}
	if len(m.Jobs) == 0 && !m.filtered() {
		return nil, 0, status.Error(codes.InvalidArgument, "kill_jobs_msg: no job identification provided (give jobs or a filter such as user_name, job_name, partition, job_state, account)")
	}
	for _, f := range m.Flags {
		if f != "FULL_JOB" && f != "BATCH_JOB" && f != "VERBOSE" {
			return nil, 0, status.Errorf(codes.InvalidArgument, "kill_jobs_msg.flags=%s: Parity signals whole jobs only (FULL_JOB, BATCH_JOB, VERBOSE)", f)
		}
	}
	var sig int32
	if m.Signal != nil {
		n, ok := signalNumber(*m.Signal)
		if !ok {
			return nil, 0, status.Errorf(codes.InvalidArgument, "kill_jobs_msg.signal=%q: not a signal name (KILL, TERM, USR1) or number", *m.Signal)
		}
		if n != 9 { // SIGKILL is scancel's default: the job is cancelled
			sig = n
		}
	}
	for i, v := range m.Jobs {
		if _, _, err := jobRef(v); err != nil {
			return nil, 0, status.Errorf(codes.InvalidArgument, "kill_jobs_msg.jobs[%d]: %s", i, status.Convert(err).Message())
		}
	}
	return &m, sig, nil
}

// killTargets resolves the jobs named and the filters into the jobs to signal.
func (h *Handler) killTargets(c *call, m *killJobsMsg) ([]target, error) {
	var named []target
	var ids []uint64
	var refs []string
	for i, v := range m.Jobs {
		id, task, err := jobRef(v)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "kill_jobs_msg.jobs[%d]: %s", i, status.Convert(err).Message())
		}
		t := target{id: id}
		if task != nil {
			t.tasks = strconv.Itoa(int(*task))
			refs = append(refs, v)
		} else {
			ids = append(ids, id)
		}
		named = append(named, t)
	}
	if !m.filtered() {
		return named, nil
	}
	req := &pb.ListJobsRequest{JobIds: ids, TaskRefs: refs, States: m.JobState, Name: deref(m.JobName)}
	if m.Account != nil {
		req.Accounts = []string{*m.Account}
	}
	if m.Partition != nil {
		req.Partitions = []string{*m.Partition}
	}
	switch {
	case m.UserName != nil:
		req.Users = []string{*m.UserName}
	case !c.id.Operator():
		req.Users = []string{c.id.User}
	}
	jobs, err := h.listJobs(c, req)
	if err != nil {
		return nil, err
	}
	out := make([]target, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, target{id: j.GetId()})
	}
	return out, nil
}
