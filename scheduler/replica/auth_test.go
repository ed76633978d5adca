package replica

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// tcpLayer is a plain TCP stream layer on a loopback port.
type tcpLayer struct{ net.Listener }

func (l tcpLayer) Dial(a raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", string(a), timeout)
}

func listenLayer(t *testing.T, key string) *authLayer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newAuthLayer(tcpLayer{lis}, []byte(key), slog.New(slog.DiscardHandler))
	t.Cleanup(func() { l.Close() })
	return l
}

func TestPeersHoldingTheKeyConnect(t *testing.T) {
	server, client := listenLayer(t, "cluster-key"), listenLayer(t, "cluster-key")
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := server.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := client.Dial(raft.ServerAddress(server.Addr().String()), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("raft")); err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	defer s.Close()
	got := make([]byte, 4)
	if _, err := io.ReadFull(s, got); err != nil || string(got) != "raft" {
		t.Fatalf("after the handshake the peer read %q, %v", got, err)
	}
}

func TestAPeerWithoutTheKeyIsRefusedBothWays(t *testing.T) {
	server, stranger := listenLayer(t, "cluster-key"), listenLayer(t, "a user's token")
	if _, err := stranger.Dial(raft.ServerAddress(server.Addr().String()), time.Second); !errors.Is(err, ErrPeerAuth) {
		t.Fatalf("dialing a replica without the key: %v, want ErrPeerAuth", err)
	}
	// A raw client that skips the handshake never reaches raft either: the
	// replica closes it once its deadline passes or its proof is wrong.
	raw, err := net.Dial("tcp", server.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.Write(make([]byte, nonceSize))
	raw.Write(make([]byte, 64)) // junk where the accepting side expects a proof
	buf := make([]byte, 128)
	raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, err := raw.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("a connection with a bad proof was kept open")
			}
			break
		}
	}
	select {
	case c := <-server.conns:
		c.Close()
		t.Fatal("a connection with a bad proof reached raft")
	default:
	}
}
