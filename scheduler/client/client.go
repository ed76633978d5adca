package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
)

// DefaultAddr is where the controller listens unless configured otherwise
// (slurmctld's port).
const DefaultAddr = clientenv.DefaultAddr

// Environment variables the client reads (see clientenv).
const (
	EnvToken      = clientenv.EnvToken
	EnvController = clientenv.EnvController
	EnvCA         = clientenv.EnvCA
)

// ErrNoToken is returned by ResolveToken when no source holds a token.
var ErrNoToken = clientenv.ErrNoToken

// Client talks to the controller, or to whichever of several controllers
// leads (failover.go). It is safe for concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	router  *router // several controllers; nil for one
	jobs    pb.JobsClient
	nodes   pb.NodesClient
	cluster pb.ClusterClient
	agent   pb.AgentClient
	resv    pb.ReservationsClient
	acct    pb.AccountingClient
	assoc   pb.AssocAdminClient
}

// Dial connects to the controller at addr, sending token with every call.
// The connection is established lazily; the first call reports an
// unreachable controller. Extra options are appended (tests pass a bufconn
// dialer, for example).
func Dial(ctx context.Context, addr, token string, opts ...grpc.DialOption) (*Client, error) {
	if addr == "" {
		return nil, fmt.Errorf("client: empty controller address")
	}
	base := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if token != "" {
		base = append(base, grpc.WithPerRPCCredentials(auth.TokenCredentials(token)))
	}
	base = append(base, opts...)
	addrs := splitAddrs(addr)
	if len(addrs) <= 1 {
		conn, err := grpc.NewClient(addr, base...)
		if err != nil {
			return nil, fmt.Errorf("client: dial %s: %w", addr, err)
		}
		return New(conn), nil
	}
	r, err := dialRouter(addrs, base)
	if err != nil {
		return nil, err
	}
	// The front connection is never used itself: its interceptors send
	// every call through the router.
	front, err := grpc.NewClient(addrs[0], append(base, grpc.WithUnaryInterceptor(r.unary), grpc.WithStreamInterceptor(r.stream))...)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("client: dial %s: %w", addr, err)
	}
	c := New(front)
	c.router = r
	return c, nil
}

// WithCA returns the dial option for a controller that serves TLS with a
// certificate signed by the CA in caFile (PEM). Passed to Dial, it
// replaces the default plain connection.
func WithCA(caFile string) (grpc.DialOption, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("client: --ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("client: --ca=%s: no PEM certificate in the file", caFile)
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})), nil
}

// New wraps an existing connection.
func New(conn *grpc.ClientConn) *Client {
	return &Client{conn: conn, jobs: pb.NewJobsClient(conn), nodes: pb.NewNodesClient(conn),
		cluster: pb.NewClusterClient(conn), agent: pb.NewAgentClient(conn), resv: pb.NewReservationsClient(conn),
		acct: pb.NewAccountingClient(conn), assoc: pb.NewAssocAdminClient(conn)}
}

// Close closes the connections.
func (c *Client) Close() error {
	err := c.conn.Close()
	if c.router != nil {
		if rerr := c.router.close(); err == nil {
			err = rerr
		}
	}
	return err
}

// Conn returns the underlying connection.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// ResolveToken picks the token: the flag value, else $PARITY_TOKEN, else
// the first line of ~/.config/parity/token.
func ResolveToken(flag string) (string, error) { return clientenv.ResolveToken(flag) }

// TokenPath is where a user's token is kept: ~/.config/parity/token
// (under $XDG_CONFIG_HOME when set).
func TokenPath() (string, error) { return clientenv.TokenPath() }

// ResolveAddr picks the controller address: the flag value, else
// $PARITY_CONTROLLER, else DefaultAddr.
func ResolveAddr(flag string) string { return clientenv.ResolveAddr(flag) }

// Message returns the human text of an error from a call: the status
// message for gRPC errors, err.Error() otherwise.
func Message(err error) string {
	if err == nil {
		return ""
	}
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}

// Target is a cluster the conformance suite (and other black-box callers)
// can drive only through this package: a lab cluster started in-process or
// as child processes, or a live one. Dial returns a client acting as user
// (the target mints or looks up that user's token); capabilities and
// fault injection are added by the conformance framework on top of this.
type Target interface {
	Name() string
	Dial(ctx context.Context, user string) (*Client, error)
}
