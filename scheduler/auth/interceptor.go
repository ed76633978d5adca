package auth

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// MetadataKey is the gRPC metadata key that carries "Bearer <token>".
const MetadataKey = "authorization"

// Identity is an authenticated caller.
type Identity struct {
	User string
	Role Role
	Node string // agents only
}

// Admin reports whether the caller is an admin.
func (id Identity) Admin() bool { return id.Role == RoleAdmin }

// Operator reports whether the caller may act on every job and node
// (operators and admins).
func (id Identity) Operator() bool { return id.Role.AtLeast(RoleOperator) }

type identityKey struct{}

// WithIdentity returns a context carrying id (tests and in-process callers).
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the caller the interceptors authenticated.
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// Authenticator verifies tokens on every call.
type Authenticator struct {
	Key Key
	// Now is the clock for expiry (time.Now when nil).
	Now func() time.Time
	// Elevate returns the role the cluster configuration grants a user
	// (operators and admins listed in the cluster file); the caller gets
	// the higher of it and the token's role. Nil grants nothing extra.
	Elevate func(user string) Role
	// Public lists full method names callable without a token (none by
	// default; health probes, for example).
	Public map[string]bool

	// cache remembers verified tokens (a client sends the same one on
	// every call); expiry is still checked on every use.
	mu    sync.Mutex
	cache map[string]Claims
}

// maxCached bounds the verified-token cache; it is emptied when full.
const maxCached = 4096

// verify checks a token, from the cache when it was verified before.
func (a *Authenticator) verify(tok string, now time.Time) (Claims, error) {
	a.mu.Lock()
	c, ok := a.cache[tok]
	a.mu.Unlock()
	if ok {
		if !c.Expires.IsZero() && !now.Before(c.Expires) {
			return Claims{}, fmt.Errorf("%w at %s", ErrExpired, c.Expires.UTC().Format(time.RFC3339))
		}
		return c, nil
	}
	c, err := Verify(a.Key, tok, now)
	if err != nil {
		return Claims{}, err
	}
	a.mu.Lock()
	if a.cache == nil || len(a.cache) >= maxCached {
		a.cache = make(map[string]Claims)
	}
	a.cache[tok] = c
	a.mu.Unlock()
	return c, nil
}

// agentService prefixes the methods only agents (and admins) may call.
const agentService = "/parity.v1.Agent/"

// Authenticate turns the call's metadata into an identity and checks the
// coarse rule for the method.
func (a *Authenticator) Authenticate(ctx context.Context, method string) (Identity, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	return a.authenticate(md, method)
}

func (a *Authenticator) authenticate(md metadata.MD, method string) (Identity, error) {
	vals := md.Get(MetadataKey)
	if len(vals) == 0 {
		return Identity{}, status.Error(codes.Unauthenticated, "authentication required: no token (use --token, PARITY_TOKEN or ~/.config/parity/token)")
	}
	tok, ok := strings.CutPrefix(vals[0], "Bearer ")
	if !ok {
		return Identity{}, status.Error(codes.Unauthenticated, "authentication failure: expected \"Bearer <token>\"")
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	c, err := a.verify(tok, now())
	if err != nil {
		return Identity{}, status.Errorf(codes.Unauthenticated, "authentication failure: %v", err)
	}
	id := Identity{User: c.User, Role: c.Role, Node: c.Node}
	if a.Elevate != nil && id.Role != RoleAgent {
		if r := a.Elevate(id.User); r.AtLeast(id.Role) {
			id.Role = r
		}
	}
	agentCall := strings.HasPrefix(method, agentService)
	switch {
	case agentCall && id.Role != RoleAgent && id.Role != RoleAdmin:
		return Identity{}, status.Errorf(codes.PermissionDenied, "%s is for node agents; %s %q may not call it", method, id.Role, id.User)
	case !agentCall && id.Role == RoleAgent:
		return Identity{}, status.Errorf(codes.PermissionDenied, "agent credential for node %q may call only the Agent service, not %s", id.Node, method)
	}
	return id, nil
}

// Tap returns the check to run when a call's stream opens
// (grpc.InTapHandle): from the method and the headers alone, before gRPC
// reads a byte of the call's message, so a caller without a valid token
// costs the server its headers only, whatever it sends after them. The
// identity goes into the call's context, where the interceptors find it.
func (a *Authenticator) Tap() tap.ServerInHandle {
	return func(ctx context.Context, info *tap.Info) (context.Context, error) {
		if a.Public[info.FullMethodName] {
			return ctx, nil
		}
		id, err := a.authenticate(info.Header, info.FullMethodName)
		if err != nil {
			return nil, err
		}
		return WithIdentity(ctx, id), nil
	}
}

// Unary returns the unary server interceptor: it hands the handler the
// identity the tap found, or authenticates the call itself on a server
// without the tap.
func (a *Authenticator) Unary() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if _, ok := FromContext(ctx); ok || a.Public[info.FullMethod] {
			return handler(ctx, req)
		}
		id, err := a.Authenticate(ctx, info.FullMethod)
		if err != nil {
			return nil, err
		}
		return handler(WithIdentity(ctx, id), req)
	}
}

// Stream returns the stream server interceptor (as Unary).
func (a *Authenticator) Stream() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if _, ok := FromContext(ss.Context()); ok || a.Public[info.FullMethod] {
			return handler(srv, ss)
		}
		id, err := a.Authenticate(ss.Context(), info.FullMethod)
		if err != nil {
			return err
		}
		return handler(srv, &identityStream{ServerStream: ss, ctx: WithIdentity(ss.Context(), id)})
	}
}

type identityStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identityStream) Context() context.Context { return s.ctx }

// TokenCredentials attach a token to every call as per-RPC credentials.
// Parity's transport is plaintext gRPC on the cluster network, so they do
// not demand transport security; put the controller behind TLS where the
// network is not trusted.
type TokenCredentials string

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (t TokenCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{MetadataKey: "Bearer " + string(t)}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (TokenCredentials) RequireTransportSecurity() bool { return false }
