package rest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ContentType is what every answer is sent as.
const ContentType = "application/json"

// Slurm's error numbers (slurm_errno.h) for the codes a client tells
// apart; everything else is SLURM_ERROR.
const (
	errnoGeneric      = -1   // SLURM_ERROR
	errnoAccessDenied = 2002 // ESLURM_ACCESS_DENIED
	errnoInvalidNode  = 2009 // ESLURM_INVALID_NODE_NAME
	errnoInvalidJobID = 2017 // ESLURM_INVALID_JOB_ID
)

func (h *Handler) meta(c *call) *meta {
	m := &meta{Command: []string{}}
	m.Plugin = metaPlugin{Type: "openapi/slurmctld", Name: "Slurm OpenAPI slurmctld", DataParser: "data_parser/" + DataParser}
	m.Client = metaClient{User: c.id.User}
	if c.r != nil {
		m.Client.Source = c.r.RemoteAddr
	}
	m.Slurm.Release = "parity " + h.b.Version
	m.Slurm.Cluster = h.b.ClusterName
	return m
}

// writeBody sends a response that embeds envelope, filled in here.
func (h *Handler) writeBody(c *call, code int, body any) {
	if e, ok := body.(interface{ Env() *envelope }); ok {
		env := e.Env()
		env.Meta = h.meta(c)
		env.Warnings = append(c.warnings, env.Warnings...)
		if env.Warnings == nil {
			env.Warnings = []warning{}
		}
		if env.Errors == nil {
			env.Errors = []apiErr{}
		}
	}
	b, err := json.Marshal(body)
	if err != nil {
		h.b.Logger.Error("rest: encode answer", "path", c.r.URL.Path, "err", err)
		code, b = http.StatusInternalServerError, []byte(`{"errors":[{"description":"encode answer failed","error_number":1,"error":"Unspecified error","source":"parity"}],"warnings":[]}`)
	}
	c.w.Header().Set("Content-Type", ContentType)
	c.w.WriteHeader(code)
	c.w.Write(append(b, '\n'))
}

// writeError answers err in the operation's own schema: its skeleton
// (the properties the schema requires, empty) with the envelope.
func (h *Handler) writeError(c *call, skeleton map[string]any, err error) {
	st := statusOf(err)
	skeleton["meta"] = h.meta(c)
	ws := c.warnings
	if ws == nil {
		ws = []warning{}
	}
	skeleton["warnings"] = ws
	source, path := "parity", ""
	if c.op != nil {
		source, path = c.op.method+" "+c.op.path, c.op.path
	}
	skeleton["errors"] = []apiErr{{Description: st.Message(), ErrorNumber: slurmErrno(st.Code(), path), Error: errorName(st.Code()), Source: source}}
	code := httpStatus(st.Code())
	b, jerr := json.Marshal(skeleton)
	if jerr != nil {
		code, b = http.StatusInternalServerError, []byte(`{"errors":[],"warnings":[]}`)
	}
	c.w.Header().Set("Content-Type", ContentType)
	c.w.WriteHeader(code)
	c.w.Write(append(b, '\n'))
}

func statusOf(err error) *status.Status {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err)
	}
	return status.Convert(err)
}

// slurmErrno is the error number for a code on the operation's path: a
// job or node that is not found has its own number.
func slurmErrno(c codes.Code, path string) int32 {
	switch {
	case c == codes.NotFound && (strings.Contains(path, "/job/") || strings.Contains(path, "{job_id}")):
		return errnoInvalidJobID
	case c == codes.NotFound && strings.Contains(path, "/node/"):
		return errnoInvalidNode
	}
	switch c {
	case codes.PermissionDenied:
		return errnoAccessDenied
	}
	return errnoGeneric
}

// errorName is the short text slurm_strerror gives for the number.
func errorName(c codes.Code) string {
	switch c {
	case codes.NotFound:
		return "Not found"
	case codes.PermissionDenied:
		return "Access/permission denied"
	case codes.Unauthenticated:
		return "Invalid authentication credential"
	case codes.Unimplemented:
		return "Requested operation not supported"
	case codes.InvalidArgument:
		return "Query empty or not RFC-compliant"
	case codes.ResourceExhausted:
		return "Request too large or too many requests"
	}
	return "Unspecified error"
}

// httpStatus maps a gRPC code to its HTTP status, as /v1/jobs does.
func httpStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.InvalidArgument, codes.OutOfRange, codes.FailedPrecondition:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.ResourceExhausted:
		return http.StatusRequestEntityTooLarge
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}
