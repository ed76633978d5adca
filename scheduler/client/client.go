package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// DefaultAddr is where the controller listens unless configured otherwise
// (slurmctld's port).
const DefaultAddr = "127.0.0.1:6817"

// Environment variables the client reads.
const (
	EnvToken      = "PARITY_TOKEN"
	EnvController = "PARITY_CONTROLLER"
	// EnvCA names a PEM file of the CA that signed the controller's TLS
	// certificate; set, the client speaks TLS.
	EnvCA = "PARITY_CA"
)

// ErrNoToken is returned by ResolveToken when no source holds a token.
var ErrNoToken = errors.New("client: no token: pass --token, set PARITY_TOKEN or write ~/.config/parity/token (an admin makes one with `parity token create --user NAME`)")

// Client talks to one controller. It is safe for concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	jobs    pb.JobsClient
	nodes   pb.NodesClient
	cluster pb.ClusterClient
	agent   pb.AgentClient
	resv    pb.ReservationsClient
	acct    pb.AccountingClient
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
	conn, err := grpc.NewClient(addr, append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", addr, err)
	}
	return New(conn), nil
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
		acct: pb.NewAccountingClient(conn)}
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Conn returns the underlying connection.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// ResolveToken picks the token: the flag value, else $PARITY_TOKEN, else
// the first line of ~/.config/parity/token.
func ResolveToken(flag string) (string, error) {
	if t := strings.TrimSpace(flag); t != "" {
		return t, nil
	}
	if t := strings.TrimSpace(os.Getenv(EnvToken)); t != "" {
		return t, nil
	}
	path, err := TokenPath()
	if err != nil {
		return "", ErrNoToken
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", ErrNoToken
	}
	if t := strings.TrimSpace(string(b)); t != "" {
		return t, nil
	}
	return "", ErrNoToken
}

// TokenPath is where a user's token is kept: ~/.config/parity/token
// (under $XDG_CONFIG_HOME when set).
func TokenPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("client: config dir: %w", err)
	}
	return filepath.Join(dir, "parity", "token"), nil
}

// ResolveAddr picks the controller address: the flag value, else
// $PARITY_CONTROLLER, else DefaultAddr.
func ResolveAddr(flag string) string {
	if flag != "" {
		return flag
	}
	if a := os.Getenv(EnvController); a != "" {
		return a
	}
	return DefaultAddr
}

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
