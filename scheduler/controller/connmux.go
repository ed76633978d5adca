package controller

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ALPN protocol names: gRPC clients ask for h2; HTTP/1.1 clients for
// http/1.1 (or nothing).
const (
	alpnGRPC  = "h2"
	alpnHTTP1 = "http/1.1"
)

// http2Preface is how every gRPC connection in plain TCP begins (HTTP/2
// with prior knowledge); an HTTP/1.1 request begins with its method.
var http2Preface = []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")

// sniffTimeout bounds how long a new connection may take to say which
// protocol it speaks (and, with TLS, to finish its handshake).
const sniffTimeout = 10 * time.Second

// connMux splits one listener between gRPC, the HTTP API and the other
// controllers' replica connections, so that clients and peers find the
// controller at its one address, with one TLS certificate. Routing a connection (reading its first bytes, or its TLS
// handshake) happens on its own goroutine, so a slow client never holds
// up the others. At most maxConns connections are open at once, counted
// from accept to close, whichever side holds them: each costs memory
// before it has said who it is.
type connMux struct {
	lis  net.Listener
	tls  *tls.Config // nil: plain TCP
	log  *slog.Logger
	grpc *muxListener
	http *muxListener
	// replica takes the connections of other controllers (raft), which
	// begin with replicaMagic; with one controller nothing reads it.
	replica *muxListener

	maxConns int64
	open     atomic.Int64
}

func newConnMux(lis net.Listener, cfg *tls.Config, maxConns int, log *slog.Logger) *connMux {
	m := &connMux{lis: lis, tls: cfg, log: log, maxConns: int64(maxConns)}
	m.grpc, m.http, m.replica = newMuxListener(lis.Addr()), newMuxListener(lis.Addr()), newMuxListener(lis.Addr())
	return m
}

// serve accepts until the listener is closed, then closes both sides.
// Other accept errors (out of file descriptors) are retried after a pause
// that grows to a second, as net/http and gRPC do.
func (m *connMux) serve() {
	defer func() {
		m.grpc.shut(net.ErrClosed)
		m.http.shut(net.ErrClosed)
		m.replica.shut(net.ErrClosed)
	}()
	var pause time.Duration
	for {
		conn, err := m.lis.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			m.log.Warn("api accept", "err", err, "retry_in", pause)
			time.Sleep(pause)
			continue
		}
		pause = 0
		if m.open.Add(1) > m.maxConns {
			m.open.Add(-1)
			m.log.Debug("api connection refused: too many open", "remote", conn.RemoteAddr().String(), "max", m.maxConns)
			conn.Close()
			continue
		}
		go m.route(&countedConn{Conn: conn, open: &m.open})
	}
}

// countedConn gives back its place in the count when closed.
type countedConn struct {
	net.Conn
	open *atomic.Int64
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}

// route hands conn to the side its protocol belongs to.
func (m *connMux) route(conn net.Conn) {
	if err := conn.SetDeadline(time.Now().Add(sniffTimeout)); err != nil {
		conn.Close()
		return
	}
	to, c, err := m.classify(conn)
	if err != nil {
		m.log.Debug("api connection refused", "remote", conn.RemoteAddr().String(), "err", err)
		conn.Close()
		return
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		c.Close()
		return
	}
	to.deliver(c)
}

func (m *connMux) classify(conn net.Conn) (*muxListener, net.Conn, error) {
	if m.tls != nil {
		tc := tls.Server(conn, m.tls)
		if err := tc.Handshake(); err != nil {
			return nil, nil, err
		}
		switch tc.ConnectionState().NegotiatedProtocol {
		case alpnGRPC:
			return m.grpc, tc, nil
		case alpnHTTP1:
			return m.http, tc, nil
		}
		conn = tc // no ALPN: tell them apart by their first bytes
	}
	// Four bytes tell "PRI " (HTTP/2) from any HTTP/1.x method.
	head := make([]byte, 4)
	if _, err := io.ReadFull(conn, head); err != nil {
		return nil, nil, err
	}
	if bytes.Equal(head, replicaMagic) {
		return m.replica, conn, nil // the magic is the mux's, not raft's
	}
	c := &prefixConn{Conn: conn, prefix: head}
	if bytes.Equal(head, http2Preface[:4]) {
		return m.grpc, c, nil
	}
	return m.http, c, nil
}

// close stops accepting; serve then closes both sides. A connection
// still being classified ends by its deadline or is closed on delivery.
func (m *connMux) close() error { return m.lis.Close() }

// muxListener is one side of the mux, a net.Listener its server serves.
type muxListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	err   error
}

func newMuxListener(addr net.Addr) *muxListener {
	return &muxListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// deliver hands c to Accept, or closes it when this side is closed.
func (l *muxListener) deliver(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.done:
		c.Close()
	}
}

func (l *muxListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		l.mu.Lock()
		defer l.mu.Unlock()
		return nil, l.err
	}
}

// shut closes this side with err (what Accept returns from then on).
func (l *muxListener) shut(err error) {
	l.once.Do(func() {
		l.mu.Lock()
		l.err = err
		l.mu.Unlock()
		close(l.done)
	})
}

// Close closes this side only; the server that owns it stops accepting.
func (l *muxListener) Close() error {
	l.shut(net.ErrClosed)
	return nil
}

func (l *muxListener) Addr() net.Addr { return l.addr }

// prefixConn gives back the bytes the mux read to classify it.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
