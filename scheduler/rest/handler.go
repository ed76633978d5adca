package rest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/rest/dataparser"
)

// Prefixes the handler answers under (mount both on the controller's mux).
const (
	SlurmPrefix   = "/slurm/"
	SlurmDBPrefix = "/slurmdb/"
	// DataParser is the one data parser version served.
	DataParser = dataparser.Version
)

// DefaultMaxBody bounds a request body when Backend.MaxBody is zero: a
// job's script dominates it, as on the gRPC submit path.
const DefaultMaxBody = 1 << 20

// Backend is what the REST API runs on: the controller's own services
// (their authorisation rules apply unchanged, as they read the identity
// the call carries) and its authenticator.
type Backend struct {
	Jobs    pb.JobsServer
	Nodes   pb.NodesServer
	Cluster pb.ClusterServer
	// Reservations and Accounting answer reservations, shares and the
	// slurmdb paths.
	Reservations pb.ReservationsServer
	Accounting   pb.AccountingServer
	// AssocAdmin changes accounts, users and QOS (the slurmdb writes);
	// State, when set, is the configuration with the accounts, QOS and
	// partitions in force, which the slurmdb reads answer from instead
	// of Config.
	AssocAdmin pb.AssocAdminServer
	State      func() *config.Cluster
	// Config is the cluster file: slurmdbd's accounts, users, QOS,
	// cluster and TRES records are read from it (nil: those paths answer
	// that there is none).
	Config *config.Cluster
	// Authenticate turns the call's incoming metadata into an identity for
	// the full gRPC method named, as the gRPC interceptors and /v1/jobs do
	// (auth.Authenticator.Authenticate).
	Authenticate func(ctx context.Context, method string) (auth.Identity, error)
	ClusterName  string
	Version      string
	Now          func() time.Time
	Logger       *slog.Logger
	MaxBody      int64
	// Gate, when set, is asked before every operation, with the full
	// gRPC method it runs as ("" for none): an error refuses it in
	// Slurm's envelope (a follower controller answers Unavailable and
	// puts the leader's address on w's headers). A leader confirms it
	// still leads as it does for that method over gRPC: a submission's
	// commit fences it, so job/submit skips the check, as gRPC's Submit.
	Gate func(w http.ResponseWriter, method string) error
	// ReportsDir is where conformance reports are kept, for
	// /parity/v1/conformance/latest ("": it says how to configure it).
	ReportsDir string
}

// Handler serves the /slurm/v0.0.44/ and /slurmdb/v0.0.44/ paths,
// Parity's own under /parity/v1/ and the OpenAPI document of those it
// honours (OpenAPIPath).
type Handler struct {
	b   Backend
	mux *http.ServeMux
	// doc is the OpenAPI document of the routes (docErr: why there is none).
	doc    []byte
	docErr error
}

// serveFunc answers one operation: a body (a response type that embeds
// envelope) or an error, whose gRPC code picks the HTTP status.
type serveFunc func(h *Handler, c *call) (any, error)

// call is one request in flight.
type call struct {
	ctx      context.Context
	id       auth.Identity
	r        *http.Request
	w        http.ResponseWriter
	op       *operation
	warnings []warning
}

func (c *call) warn(source, format string, args ...any) {
	c.warnings = append(c.warnings, warning{Source: source, Description: fmt.Sprintf(format, args...)})
}

// New builds the handler over b.
func New(b Backend) *Handler {
	if b.Now == nil {
		b.Now = time.Now
	}
	if b.Logger == nil {
		b.Logger = slog.New(slog.DiscardHandler)
	}
	if b.MaxBody <= 0 {
		b.MaxBody = DefaultMaxBody
	}
	h := &Handler{b: b, mux: http.NewServeMux()}
	byPath := map[string][]*operation{}
	var paths []string
	ops := operations()
	own := parityOperations()
	for _, o := range own {
		ops = append(ops, o.operation)
	}
	for _, op := range ops {
		if byPath[op.path] == nil {
			paths = append(paths, op.path)
		}
		byPath[op.path] = append(byPath[op.path], &op)
	}
	for _, p := range paths {
		ops := byPath[p]
		serve := func(w http.ResponseWriter, r *http.Request) { h.dispatch(w, r, ops) }
		// Clients spell the paths with and without the trailing slash.
		bare := strings.TrimSuffix(p, "/")
		h.mux.HandleFunc(bare, serve)
		h.mux.HandleFunc(bare+"/{$}", serve)
	}
	h.doc, h.docErr = openAPIDocument(operations(), own, b.Version)
	if h.docErr != nil {
		b.Logger.Error("rest: OpenAPI document", "err", h.docErr)
	}
	h.mux.HandleFunc(OpenAPIPath, h.serveOpenAPI)
	h.mux.HandleFunc("/", h.unknownPath)
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// unknownPath answers a path the document does not have.
func (h *Handler) unknownPath(w http.ResponseWriter, r *http.Request) {
	msg := fmt.Sprintf("%s %s: no such path in slurmrestd's data parser %s", r.Method, r.URL.Path, DataParser)
	if strings.HasPrefix(r.URL.Path, ParityPrefix) {
		msg = fmt.Sprintf("%s %s: no such Parity path (%s lists the paths served)", r.Method, r.URL.Path, OpenAPIPath)
	} else if !strings.HasPrefix(r.URL.Path, SlurmPrefix+DataParser+"/") && !strings.HasPrefix(r.URL.Path, SlurmDBPrefix+DataParser+"/") {
		msg += fmt.Sprintf(" (Parity serves only %s%s/ and %s%s/)", SlurmPrefix, DataParser, SlurmDBPrefix, DataParser)
	}
	h.writeError(&call{r: r, w: w}, none(), status.Error(codes.NotFound, msg))
}

func (h *Handler) dispatch(w http.ResponseWriter, r *http.Request, ops []*operation) {
	var op *operation
	var allowed []string
	for _, o := range ops {
		allowed = append(allowed, o.method)
		if o.method == r.Method {
			op = o
		}
	}
	c := &call{r: r, w: w, op: op}
	if h.b.Gate != nil {
		method := ""
		if op != nil {
			method = op.grpc
		}
		if err := h.b.Gate(w, method); err != nil {
			h.writeError(c, skeletonOf(op), err)
			return
		}
	}
	if op == nil {
		sort.Strings(allowed)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		h.writeError(c, none(), status.Errorf(codes.Unimplemented, "%s %s: method not allowed (the document has %s)", r.Method, r.URL.Path, strings.Join(allowed, ", ")))
		return
	}
	if err := h.authenticate(c); err != nil {
		w.Header().Set("WWW-Authenticate", "Bearer")
		h.writeError(c, op.skeleton(), err)
		return
	}
	if op.serve == nil {
		why := op.why
		if why == "" {
			why = "Parity does not implement this slurmrestd operation yet (data parser " + DataParser + ")"
		}
		h.writeError(c, op.skeleton(), status.Errorf(codes.Unimplemented, "%s %s: %s", op.method, op.path, why))
		return
	}
	body, err := op.serve(h, c)
	if err != nil {
		h.writeError(c, op.skeleton(), err)
		return
	}
	if body != nil { // nil: the operation wrote its own answer (streamed)
		h.writeBody(c, http.StatusOK, body)
	}
}

func skeletonOf(op *operation) map[string]any {
	if op == nil {
		return none()
	}
	return op.skeleton()
}

// authenticate reads the token the way /v1/jobs does (Authorization:
// Bearer) or as slurmrestd's auth/jwt sends it (X-SLURM-USER-TOKEN), and
// has the controller's authenticator check it for the operation's gRPC
// twin. X-SLURM-USER-NAME, when given, must name the token's user:
// Parity does not let one user's token act for another.
func (h *Handler) authenticate(c *call) error {
	authz := c.r.Header.Get("Authorization")
	if tok := c.r.Header.Get("X-SLURM-USER-TOKEN"); tok != "" && authz == "" {
		authz = "Bearer " + tok
	}
	ctx := c.r.Context()
	if authz != "" {
		ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(auth.MetadataKey, authz))
	}
	method := c.op.grpc
	if method == "" {
		method = pb.Cluster_WhoAmI_FullMethodName
	}
	id, err := h.b.Authenticate(ctx, method)
	if err != nil {
		return err
	}
	if u := c.r.Header.Get("X-SLURM-USER-NAME"); u != "" && u != id.User {
		return status.Errorf(codes.PermissionDenied, "X-SLURM-USER-NAME %q does not match the token's user %q (Parity does not act for another user)", u, id.User)
	}
	c.id, c.ctx = id, auth.WithIdentity(ctx, id)
	return nil
}
