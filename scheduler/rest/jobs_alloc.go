package rest

import (
	"encoding/json"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// allocReq is v0.0.44_job_alloc_req.
type allocReq struct {
	HetJob []json.RawMessage `json:"hetjob"`
	Job    json.RawMessage   `json:"job"`
}

// allocResp is v0.0.44_openapi_job_alloc_resp.
type allocResp struct {
	JobID   int32  `json:"job_id"`
	UserMsg string `json:"job_submit_user_msg"`
	envelope
}

// allocScript stands for the script an allocation has none of: salloc's
// own (--wrap true); an interactive job's script is never run, its
// allocation is held for the steps the client starts.
const allocScript = "#!/bin/sh\ntrue\n"

// serveAllocate is POST job/allocate, salloc without the waiting: the
// job is submitted as salloc submits it (the same Jobs.Submit, marked
// interactive, so the agents hold its allocation for steps rather than
// run a batch script) and the answer gives its id at once, as
// slurm_allocate_resources does. The allocation lasts until it is
// cancelled (DELETE job/{job_id}) or reaches its time limit.
func serveAllocate(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	spec, err := decodeAllocate(c, body)
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
	return &allocResp{JobID: int32(resp.GetJobId()), UserMsg: resp.GetMessage()}, nil
}

// decodeAllocate reads a job_alloc_req into the interactive job it asks for.
func decodeAllocate(c *call, body []byte) (*pb.JobSpec, error) {
	var req allocReq
	if err := decodeObject(c, body, "job_alloc_req", setOf("hetjob", "job"), &req, true); err != nil {
		return nil, err
	}
	if len(req.HetJob) > 0 {
		return nil, status.Error(codes.InvalidArgument, "job_alloc_req.hetjob: heterogeneous jobs are not supported by Parity; give job")
	}
	if len(req.Job) == 0 || string(req.Job) == "null" {
		return nil, status.Error(codes.InvalidArgument, "job_alloc_req: job is required")
	}
	var d jobDesc
	if err := decodeObject(c, req.Job, "job", jobDescProps(), &d, false); err != nil {
		return nil, err
	}
	if d.Name == nil { // salloc's default name
		name := "interactive"
		d.Name = &name
	}
	spec, err := d.spec(allocScript)
	if err != nil {
		return nil, err
	}
	spec.Interactive = true
	return spec, nil
}
