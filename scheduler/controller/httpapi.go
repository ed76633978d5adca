package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/httplimit"
	"github.com/parityhpc/parity/scheduler/rest"
)

// apiLimits are the HTTP API's defaults: a submission's body is bounded
// as its gRPC message is (the script and environment dominate it), and
// must arrive whole within Read, so a client that declares a large body
// and stalls is cut off; Write stays unbounded, as the answer waits for
// the durable commit. Ten seconds for the largest body (5 MiB) asks half a
// megabyte a second of a client: any cluster network, while a stalled
// connection holds its buffer a third as long as it did at 30 s.
func apiLimits() httplimit.Limits {
	return httplimit.Limits{ReadHeader: sniffTimeout, Read: 10 * time.Second, Idle: 2 * time.Minute,
		MaxBody: maxMsgSubmit, MaxHeaderBytes: 64 << 10}
}

// httpAPI serves the HTTP/JSON submit endpoint (jsonapi.SubmitPath) beside
// gRPC on the controller's listener, for clients that start a process per
// job and must not pay gRPC's and protobuf's start-up (the lean sbatch).
// A call goes through the same authentication, the same Submit (validation
// and the durable group commit: the answer comes after the commit) and
// gives the same messages as gRPC's.
func (c *Controller) httpAPI() http.Handler {
	mux := http.NewServeMux()
	jobs := &jobsService{c: c}
	mux.HandleFunc(jsonapi.SubmitPath, func(w http.ResponseWriter, r *http.Request) {
		c.serveSubmit(w, r, jobs)
	})
	// slurmrestd's API (data parser v0.0.44) over the same services and authenticator.
	slurm := rest.New(rest.Backend{Jobs: jobs, Nodes: &nodesService{c: c}, Cluster: &clusterService{c: c},
		Reservations: &reservationsService{c: c}, Accounting: &accountingService{c: c}, Config: c.cfg,
		AssocAdmin: &assocAdminService{c: c}, State: c.pcfg,
		Authenticate: c.authn.Authenticate, ClusterName: c.cfg.Name, Version: c.opts.Version, Now: c.now, Logger: c.log,
		Gate: c.gateFor, ReportsDir: c.opts.ReportsDir})
	mux.Handle(rest.SlurmPrefix, slurm)
	mux.Handle(rest.ParityPrefix, slurm)
	mux.Handle(rest.SlurmDBPrefix, slurm)
	mux.Handle(rest.OpenAPIPath, slurm)
	return mux
}

// newHTTPAPIServer is the server for the mux's HTTP side: every path's
// body is bounded, answered with the API's JSON error when over.
func (c *Controller) newHTTPAPIServer() *http.Server {
	return httplimit.Server(c.leaderHTTP(c.httpAPI()), c.opts.Limits.HTTP, apiLimits(), bodyTooLarge, c.log)
}

func bodyTooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	writeAPIError(w, http.StatusRequestEntityTooLarge, status.Error(codes.ResourceExhausted, httplimit.Message(r, limit)))
}

func (c *Controller) serveSubmit(w http.ResponseWriter, r *http.Request, jobs *jobsService) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeAPIError(w, http.StatusMethodNotAllowed,
			status.Errorf(codes.Unimplemented, "submit: method %s not allowed on %s (use POST)", r.Method, jsonapi.SubmitPath))
		return
	}
	ctx := r.Context()
	if h := r.Header.Get("Authorization"); h != "" {
		ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(auth.MetadataKey, h))
	}
	id, err := c.authn.Authenticate(ctx, pb.Jobs_Submit_FullMethodName)
	if err != nil {
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeHTTPError(w, err)
		return
	}
	// The server bounds the body (httplimit.Body) and the time to read it.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			bodyTooLarge(w, r, tooBig.Limit)
			return
		}
		writeHTTPError(w, status.Errorf(codes.InvalidArgument, "submit: read request body: %v", err))
		return
	}
	req := &pb.SubmitRequest{}
	if err := protojson.Unmarshal(body, req); err != nil {
		if f := jsonFieldAt(body, err); f != "" {
			writeHTTPError(w, status.Errorf(codes.InvalidArgument, "submit: request body is not a JSON SubmitRequest: field %q: %v", f, err))
			return
		}
		writeHTTPError(w, status.Errorf(codes.InvalidArgument, "submit: request body is not a JSON SubmitRequest: %v", err))
		return
	}
	resp, err := jobs.Submit(auth.WithIdentity(ctx, id), req)
	if err != nil {
		writeHTTPError(w, err)
		return
	}
	b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(resp)
	var out bytes.Buffer
	if err == nil {
		// protojson varies its spacing on purpose; answers stay byte-stable.
		err = json.Compact(&out, b)
	}
	if err != nil {
		writeHTTPError(w, status.Errorf(codes.Internal, "submit: encode answer: %v", err))
		return
	}
	out.WriteByte('\n')
	w.Header().Set("Content-Type", jsonapi.ContentType)
	w.Write(out.Bytes())
}

// writeHTTPError answers with the gRPC status's message and code name and
// the HTTP status that matches the code.
func writeHTTPError(w http.ResponseWriter, err error) {
	writeAPIError(w, httpStatus(statusOf(err).Code()), err)
}

func statusOf(err error) *status.Status {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err)
	}
	return status.Convert(err)
}

// writeAPIError answers err with the HTTP status code.
func writeAPIError(w http.ResponseWriter, code int, err error) {
	st := statusOf(err)
	b, jerr := json.Marshal(jsonapi.Error{Code: st.Code().String(), Message: st.Message()})
	if jerr != nil {
		b = []byte(fmt.Sprintf(`{"code":"Internal","message":%q}`, jerr.Error()))
	}
	w.Header().Set("Content-Type", jsonapi.ContentType)
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// httpStatus maps a gRPC code to its HTTP status, as grpc-gateway does.
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
		return http.StatusTooManyRequests
	case codes.Canceled:
		return 499 // client closed request
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}
