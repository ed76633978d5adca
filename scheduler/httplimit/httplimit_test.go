package httplimit

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func serve(t *testing.T, l Limits) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, "ok\n")
	})
	srv := Server(h, l, Metrics(), nil, nil)
	go srv.Serve(lis)
	t.Cleanup(func() { srv.Close() })
	return lis.Addr().String()
}

func TestServerBounds(t *testing.T) {
	const read = 200 * time.Millisecond
	tests := []struct {
		name     string
		declared int
		want     string // the answer's first line and message, "" for none
	}{
		{"stalled body", 8 << 10, ""},
		{"declared over the limit", 2 << 20, "HTTP/1.1 413 Request Entity Too Large|POST /x: request body of 2097152 bytes is over the 65536-byte limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr := serve(t, Limits{Read: read})
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", tc.declared, strings.Repeat("x", 1024))
			if err := conn.SetReadDeadline(time.Now().Add(20 * read)); err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(conn)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("connection still open; want it closed by the %v read timeout", read)
			}
			if tc.want == "" {
				return
			}
			status, msg, _ := strings.Cut(tc.want, "|")
			if !strings.HasPrefix(string(b), status) || !strings.Contains(string(b), msg) {
				t.Fatalf("answer %q; want %q with %q", b, status, msg)
			}
		})
	}
}

func TestOr(t *testing.T) {
	got := Limits{Read: time.Second}.Or(Metrics())
	want := Metrics()
	want.Read = time.Second
	if got != want {
		t.Fatalf("%+v, want %+v", got, want)
	}
}
