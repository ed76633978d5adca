package replica

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// StreamLayer is where raft's connections come from and go to: the
// controller's listener (the side of its mux that takes replica
// connections) and a dialer that reaches another controller's.
type StreamLayer interface {
	net.Listener
	Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error)
}

// ErrPeerAuth is a connection from or to a peer that does not hold the
// cluster key.
var ErrPeerAuth = errors.New("replica: peer failed authentication (not holding this cluster's key)")

const (
	nonceSize        = 32
	handshakeTimeout = 5 * time.Second
)

// authLayer authenticates every connection both ways with the cluster key
// before raft sees it: each side sends a fresh nonce and proves it holds
// the key with an HMAC over both nonces and its role, so neither a
// recorded handshake nor one side's proof can be replayed as the other's.
type authLayer struct {
	inner StreamLayer
	key   []byte
	log   *slog.Logger

	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newAuthLayer(inner StreamLayer, key []byte, log *slog.Logger) *authLayer {
	l := &authLayer{inner: inner, key: key, log: log, conns: make(chan net.Conn), done: make(chan struct{})}
	go l.acceptLoop()
	return l
}

// acceptLoop accepts from the inner listener and authenticates each
// connection on its own goroutine, so a slow or hostile peer holds up no
// one else.
func (l *authLayer) acceptLoop() {
	for {
		c, err := l.inner.Accept()
		if err != nil {
			l.Close()
			return
		}
		go func() {
			if err := l.prove(c, false); err != nil {
				l.log.Warn("replica connection refused", "remote", c.RemoteAddr().String(), "err", err)
				c.Close()
				return
			}
			select {
			case l.conns <- c:
			case <-l.done:
				c.Close()
			}
		}()
	}
}

func (l *authLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *authLayer) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.inner.Close()
}

func (l *authLayer) Addr() net.Addr { return l.inner.Addr() }

func (l *authLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	c, err := l.inner.Dial(address, timeout)
	if err != nil {
		return nil, err
	}
	if err := l.prove(c, true); err != nil {
		c.Close()
		return nil, fmt.Errorf("replica: dial %s: %w", address, err)
	}
	return c, nil
}

// prove runs the handshake on c as the dialing or the accepting side.
func (l *authLayer) prove(c net.Conn, dialer bool) error {
	if err := c.SetDeadline(time.Now().Add(handshakeTimeout)); err != nil {
		return err
	}
	mine := make([]byte, nonceSize)
	if _, err := rand.Read(mine); err != nil {
		return err
	}
	theirs := make([]byte, nonceSize)
	if err := exchange(c, mine, theirs, dialer); err != nil {
		return fmt.Errorf("replica handshake: %w", err)
	}
	// The accepting side proves itself first: a dialer that does not hold
	// the key learns nothing it could use.
	myRole, theirRole := "accept", "dial"
	if dialer {
		myRole, theirRole = "dial", "accept"
	}
	binding := channelBinding(c)
	send := func() error { _, err := c.Write(l.mac(myRole, mine, theirs, binding)); return err }
	check := func() error {
		got := make([]byte, sha256.Size)
		if _, err := io.ReadFull(c, got); err != nil {
			return fmt.Errorf("replica handshake: %w", err)
		}
		if !hmac.Equal(got, l.mac(theirRole, theirs, mine, binding)) {
			return ErrPeerAuth
		}
		return nil
	}
	steps := []func() error{send, check}
	if dialer {
		steps = []func() error{check, send}
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return c.SetDeadline(time.Time{})
}

// exchange sends mine and reads theirs, the dialer speaking first.
func exchange(c net.Conn, mine, theirs []byte, dialer bool) error {
	if dialer {
		if _, err := c.Write(mine); err != nil {
			return err
		}
		_, err := io.ReadFull(c, theirs)
		return err
	}
	if _, err := io.ReadFull(c, theirs); err != nil {
		return err
	}
	_, err := c.Write(mine)
	return err
}

// mac is role's proof over its own nonce, the peer's and the channel.
func (l *authLayer) mac(role string, own, peer, binding []byte) []byte {
	h := hmac.New(sha256.New, l.key)
	h.Write([]byte("parity-replica/" + role + "\x00"))
	h.Write(own)
	h.Write(peer)
	h.Write(binding)
	return h.Sum(nil)
}

// channelBinding is keying material exported from c's TLS session (none
// in plain TCP): both ends of one session derive the same bytes, two
// sessions spliced by a peer in the middle do not, so a proof made for
// one cannot be relayed into the other.
func channelBinding(c net.Conn) []byte {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return nil
	}
	cs := tc.ConnectionState()
	b, err := cs.ExportKeyingMaterial("EXPORTER-parity-replica", nil, 32)
	if err != nil {
		return nil
	}
	return b
}
