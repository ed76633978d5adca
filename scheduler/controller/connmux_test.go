package controller

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"
)

// accepted returns the next connection l hands out, or nil after wait.
func accepted(t *testing.T, l *muxListener, wait time.Duration) net.Conn {
	t.Helper()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			c = nil
		}
		got <- c
	}()
	select {
	case c := <-got:
		return c
	case <-time.After(wait):
		return nil
	}
}

func TestConnMuxRoutes(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir, "mux")
	tlsCfg, err := serverTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		tls   bool
		alpn  []string
		write string
		want  string // "grpc", "http" or "" (closed)
	}{
		{name: "HTTP/2 preface", write: string(http2Preface), want: "grpc"},
		{name: "HTTP/1.1 POST", write: "POST /v1/jobs HTTP/1.1\r\n", want: "http"},
		{name: "HTTP/1.0 GET", write: "GET / HTTP/1.0\r\n", want: "http"},
		{name: "TLS h2", tls: true, alpn: []string{"h2"}, want: "grpc"},
		{name: "TLS http/1.1", tls: true, alpn: []string{"http/1.1"}, want: "http"},
		{name: "TLS h2 or http/1.1, as curl offers", tls: true, alpn: []string{"h2", "http/1.1"}, want: "http"},
		{name: "TLS without ALPN, HTTP/2", tls: true, write: string(http2Preface), want: "grpc"},
		{name: "TLS without ALPN, HTTP/1.1", tls: true, write: "POST / HTTP/1.1\r\n", want: "http"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var cfg *tls.Config
			if c.tls {
				cfg = tlsCfg
			}
			m := newConnMux(lis, cfg, defaultMaxConns, slog.New(slog.NewTextHandler(io.Discard, nil)))
			go m.serve()
			defer m.close()
			var conn net.Conn
			conn, err = net.Dial("tcp", lis.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if c.tls {
				// Routing, not trust, is under test: skip verification.
				tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, NextProtos: c.alpn})
				if err := tc.Handshake(); err != nil {
					t.Fatal(err)
				}
				conn = tc
			}
			if c.write != "" {
				if _, err := io.WriteString(conn, c.write); err != nil {
					t.Fatal(err)
				}
			}
			sides := map[string]*muxListener{"grpc": m.grpc, "http": m.http}
			got := accepted(t, sides[c.want], 5*time.Second)
			if got == nil {
				t.Fatalf("not routed to %s", c.want)
			}
			defer got.Close()
			if c.write != "" {
				// The bytes read to classify are given back.
				buf := make([]byte, len(c.write))
				if _, err := io.ReadFull(got, buf); err != nil || string(buf) != c.write {
					t.Errorf("routed connection reads %q, %v; want %q", buf, err, c.write)
				}
			}
		})
	}
}

func TestConnMuxCloses(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := newConnMux(lis, nil, defaultMaxConns, slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan struct{})
	go func() { m.serve(); close(done) }()
	// A client that says too little before hanging up reaches neither side.
	conn, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "PR")
	conn.Close()
	if c := accepted(t, m.grpc, 200*time.Millisecond); c != nil {
		t.Error("a two-byte connection was routed to gRPC")
	}
	if err := m.close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not return after close")
	}
	for name, l := range map[string]*muxListener{"grpc": m.grpc, "http": m.http} {
		if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("%s side Accept after close = %v, want net.ErrClosed", name, err)
		}
	}
}
