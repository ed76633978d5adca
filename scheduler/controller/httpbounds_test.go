package controller

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/httplimit"
)

// A client that declares a large body, sends a little and stalls is cut
// off by the read timeout, on the HTTP API and on the metrics server.
func TestHTTPStalledBodyIsCutOff(t *testing.T) {
	const read = 300 * time.Millisecond
	h := startTuned(t, Options{Limits: TransportLimits{HTTP: httplimit.Limits{Read: read}}})
	tok := h.token("alice", auth.RoleUser, "")
	for _, tc := range []struct {
		name, addr, path string
		declared         int
	}{
		{"api", h.c.Addr(), jsonapi.SubmitPath, maxMsgSubmit},
		{"metrics", h.c.MetricsAddr(), "/metrics", 32 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
				tc.path, tok, jsonapi.ContentType, tc.declared, bytes.Repeat([]byte("{"), 1024))
			// Far beyond the server's bound: reaching it means the server
			// kept the connection.
			if err := conn.SetReadDeadline(time.Now().Add(20 * read)); err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(io.Discard, conn)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("connection still open after %v; want it closed after the %v read timeout", time.Since(start), read)
			}
			t.Logf("closed after %v (%v)", time.Since(start), err)
		})
	}
}

// A body over the bound gets 413 with a message naming it, on every path
// of both servers, declared or sent without a length.
func TestHTTPBodyOverLimit(t *testing.T) {
	const limit = 1024
	h := startTuned(t, Options{Limits: TransportLimits{HTTP: httplimit.Limits{MaxBody: limit}}})
	tok := "Bearer " + h.token("alice", auth.RoleUser, "")
	body := bytes.Repeat([]byte(" "), 2*limit)
	api, metrics := "http://"+h.c.Addr(), "http://"+h.c.MetricsAddr()
	for _, tc := range []struct {
		name, url string
		chunked   bool
		msg       string
	}{
		{"submit", api + jsonapi.SubmitPath, false, "POST /v1/jobs: request body of 2048 bytes is over the 1024-byte limit"},
		{"submit without a length", api + jsonapi.SubmitPath, true, "POST /v1/jobs: request body over the 1024-byte limit"},
		{"unknown API path", api + "/v1/other", false, "POST /v1/other: request body of 2048 bytes is over the 1024-byte limit"},
		{"metrics", metrics + "/metrics", false, "POST /metrics: request body of 2048 bytes is over the 1024-byte limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rd io.Reader = bytes.NewReader(body)
			if tc.chunked {
				rd = io.MultiReader(rd) // hides the length: sent chunked
			}
			req, err := http.NewRequest(http.MethodPost, tc.url, rd)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			msg := strings.TrimSpace(string(b))
			var e jsonapi.Error
			if json.Unmarshal(b, &e) == nil {
				msg = e.Message
			}
			if resp.StatusCode != http.StatusRequestEntityTooLarge || msg != tc.msg {
				t.Fatalf("status %d, %.200q; want 413, %q", resp.StatusCode, msg, tc.msg)
			}
		})
	}
}
