package auth

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

func TestAuthenticate(t *testing.T) {
	key := testKey(t)
	tok := func(c Claims) string {
		c.IssuedAt = t0
		s, err := Sign(key, c)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + s
	}
	a := &Authenticator{Key: key, Now: func() time.Time { return t0 },
		Elevate: func(u string) Role {
			if u == "olga" {
				return RoleOperator
			}
			return RoleUser
		}}
	const jobs, agent = "/parity.v1.Jobs/Submit", "/parity.v1.Agent/Heartbeat"
	tests := []struct {
		name, header, method string
		code                 codes.Code
		role                 Role
	}{
		{"no token", "", jobs, codes.Unauthenticated, ""},
		{"not bearer", "Basic x", jobs, codes.Unauthenticated, ""},
		{"forged", "Bearer pt1.e30.AAAA", jobs, codes.Unauthenticated, ""},
		{"expired", tok(Claims{User: "alice", Role: RoleUser, Expires: t0}), jobs, codes.Unauthenticated, ""},
		{"user", tok(Claims{User: "alice", Role: RoleUser}), jobs, codes.OK, RoleUser},
		{"configured operator", tok(Claims{User: "olga", Role: RoleUser}), jobs, codes.OK, RoleOperator},
		{"admin token not lowered by config", tok(Claims{User: "root", Role: RoleAdmin}), jobs, codes.OK, RoleAdmin},
		{"user on agent service", tok(Claims{User: "alice", Role: RoleUser}), agent, codes.PermissionDenied, ""},
		{"agent on agent service", tok(Claims{User: "gpu001", Role: RoleAgent, Node: "gpu001"}), agent, codes.OK, RoleAgent},
		{"agent on jobs", tok(Claims{User: "gpu001", Role: RoleAgent, Node: "gpu001"}), jobs, codes.PermissionDenied, ""},
		{"admin on agent service", tok(Claims{User: "root", Role: RoleAdmin}), agent, codes.OK, RoleAdmin},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.header != "" {
				ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(MetadataKey, tc.header))
			}
			id, err := a.Authenticate(ctx, tc.method)
			if got := status.Code(err); got != tc.code {
				t.Fatalf("code %v (%v), want %v", got, err, tc.code)
			}
			if err == nil && id.Role != tc.role {
				t.Fatalf("role %q, want %q", id.Role, tc.role)
			}
		})
	}
}

// A token verified once is cached, but its expiry still counts.
func TestCachedTokenStillExpires(t *testing.T) {
	key := testKey(t)
	now := t0
	a := &Authenticator{Key: key, Now: func() time.Time { return now }}
	tok, err := Sign(key, Claims{User: "alice", Role: RoleUser, IssuedAt: t0, Expires: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MetadataKey, "Bearer "+tok))
	for i := range 2 {
		if _, err := a.Authenticate(ctx, "/parity.v1.Jobs/List"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	now = t0.Add(time.Minute)
	if _, err := a.Authenticate(ctx, "/parity.v1.Jobs/List"); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("expired cached token: %v", err)
	}
}

// The tap refuses a call from its headers, lets public methods through
// without a token, and hands the identity it found to the interceptors.
func TestTap(t *testing.T) {
	key := testKey(t)
	tok, err := Sign(key, Claims{User: "alice", Role: RoleUser, IssuedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	const public, jobs = "/parity.v1.Cluster/Info", "/parity.v1.Jobs/Submit"
	a := &Authenticator{Key: key, Now: func() time.Time { return t0 }, Public: map[string]bool{public: true}}
	tests := []struct {
		name, header, method string
		code                 codes.Code
		user                 string
	}{
		{"no token", "", jobs, codes.Unauthenticated, ""},
		{"garbage", "Bearer garbage", jobs, codes.Unauthenticated, ""},
		{"valid", "Bearer " + tok, jobs, codes.OK, "alice"},
		{"public without token", "", public, codes.OK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md := metadata.MD{}
			if tc.header != "" {
				md = metadata.Pairs(MetadataKey, tc.header)
			}
			ctx, err := a.Tap()(context.Background(), &tap.Info{FullMethodName: tc.method, Header: md})
			if got := status.Code(err); got != tc.code {
				t.Fatalf("code %v (%v), want %v", got, err, tc.code)
			}
			if err != nil {
				return
			}
			id, ok := FromContext(ctx)
			if ok != (tc.user != "") || id.User != tc.user {
				t.Fatalf("identity %+v (%v), want user %q", id, ok, tc.user)
			}
			// The interceptor passes the tap's identity on without the
			// headers it came from.
			var seen Identity
			_, err = a.Unary()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: tc.method}, func(ctx context.Context, _ any) (any, error) {
				seen, _ = FromContext(ctx)
				return nil, nil
			})
			if err != nil || seen.User != tc.user {
				t.Fatalf("interceptor: %v, identity %+v, want user %q", err, seen, tc.user)
			}
		})
	}
}
