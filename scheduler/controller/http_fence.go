package controller

import (
	"context"
	"net/http"
)

// HTTP reads wait on the commit fence as gRPC's do (read_fence.go): an
// answer goes out only once every change it could have seen in memory is
// committed. A read whose answer saw a change that was then rolled back is
// refused instead, in the path's own error body: the answer is dropped
// unsent and the request is served again with the refusal as its gate's
// answer (slurmrestd's paths put it in Slurm's envelope).

// settledWriter holds an HTTP read's answer back until the fence settles:
// its first write waits; after a roll-back it swallows the answer.
type settledWriter struct {
	http.ResponseWriter
	c       *Controller
	ctx     context.Context
	mark    uint64
	checked bool
	refusal error
}

func (w *settledWriter) settle() bool {
	if !w.checked {
		w.checked = true
		w.refusal = w.c.settled(w.ctx, w.mark)
	}
	return w.refusal == nil
}

func (w *settledWriter) WriteHeader(code int) {
	if w.settle() {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *settledWriter) Write(b []byte) (int, error) {
	if !w.settle() {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush keeps streamed answers (long job lists) streaming.
func (w *settledWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.settle() {
		f.Flush()
	}
}

// refusedWriter carries a read's refusal to the gate of the request
// served again (gateFor answers it).
type refusedWriter struct {
	http.ResponseWriter
	refusal error
}

// isRead is an HTTP call that changes nothing.
func isRead(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }

// serveSettled serves a read behind the fence, and again with the refusal
// when what it saw was rolled back; refuse answers a path whose gate is
// not the REST handler's.
func (c *Controller) serveSettled(next http.Handler, w http.ResponseWriter, r *http.Request, restPath bool) {
	sw := &settledWriter{ResponseWriter: w, c: c, ctx: r.Context(), mark: c.fence.begin()}
	next.ServeHTTP(sw, r)
	if !sw.checked {
		sw.settle() // an answer without a body or header written
	}
	if sw.refusal == nil {
		return
	}
	if restPath {
		next.ServeHTTP(&refusedWriter{ResponseWriter: w, refusal: sw.refusal}, r)
		return
	}
	writeAPIError(w, http.StatusServiceUnavailable, sw.refusal)
}
