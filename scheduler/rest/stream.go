package rest

import (
	"bufio"
	"encoding/json"
	"net/http"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// jobStream encodes a job listing as the service streams it: each chunk's
// jobs go to the client as they come, so the answer never exists whole
// in memory (a queue of 100k jobs is hundreds of megabytes of JSON).
type jobStream struct {
	h       *Handler
	c       *call
	since   int64
	bw      *bufio.Writer
	enc     *json.Encoder // over bw: each job is encoded straight into it
	started bool
	n       int
}

// start writes the status and the answer's opening; nothing is written
// until the service has sent its first chunk, so an error before it
// still gets the error envelope.
func (s *jobStream) start() {
	if s.started {
		return
	}
	s.started = true
	s.c.w.Header().Set("Content-Type", ContentType)
	s.c.w.WriteHeader(http.StatusOK)
	s.bw = bufio.NewWriterSize(s.c.w, 64<<10)
	s.enc = json.NewEncoder(s.bw)
	s.bw.WriteString(`{"jobs":[`)
}

func (s *jobStream) send(m *pb.ListJobsResponse) error {
	s.start()
	for _, j := range m.GetJobs() {
		if s.since != 0 && lastChange(j) <= s.since {
			continue
		}
		if s.n > 0 {
			s.bw.WriteByte(',')
		}
		s.n++
		// Encode ends each job with a newline, which JSON allows there.
		if err := s.enc.Encode(toJobInfo(j, s.h.b.ClusterName)); err != nil {
			return err // the client went away: the service stops sending
		}
	}
	return nil
}

// finish writes the rest of v0.0.44_openapi_job_info_resp.
func (s *jobStream) finish(lastBackfill *noVal) error {
	s.start()
	tail := struct {
		LastBackfill *noVal `json:"last_backfill"`
		LastUpdate   *noVal `json:"last_update"`
		envelope
	}{LastBackfill: lastBackfill, LastUpdate: num(s.h.b.Now().Unix())}
	tail.Meta, tail.Errors, tail.Warnings = s.h.meta(s.c), []apiErr{}, append([]warning{}, s.c.warnings...)
	b, err := json.Marshal(tail)
	if err != nil {
		return err
	}
	s.bw.WriteString("],")
	s.bw.Write(b[1:]) // the tail's members, after the jobs
	s.bw.WriteByte('\n')
	return s.bw.Flush()
}

// streamJobs answers GET jobs by streaming; an error after the answer
// began aborts the connection, so a client never takes a cut listing for
// a whole one.
func (h *Handler) streamJobs(c *call, req *pb.ListJobsRequest, since int64) (any, error) {
	info, err := h.b.Cluster.Info(c.ctx, &pb.InfoRequest{})
	if err != nil {
		return nil, err
	}
	s := &jobStream{h: h, c: c, since: since}
	err = h.b.Jobs.List(req, &collect[pb.ListJobsResponse]{ctx: c.ctx, send: s.send})
	if err == nil {
		err = s.finish(epoch(info.GetLastPass()))
	}
	switch {
	case err != nil && !s.started:
		return nil, err
	case err != nil:
		h.b.Logger.Warn("rest: job listing cut short", "path", c.r.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil, nil
}
