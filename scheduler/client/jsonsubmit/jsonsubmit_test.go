package jsonsubmit

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
)

func TestReadAnswer(t *testing.T) {
	cases := []struct {
		name, in string
		status   int
		body     string
		err      string
	}{
		{name: "content length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: application/json\r\n\r\n{\"a\"}trailing", status: 200, body: `{"a"}`},
		{name: "until close", in: "HTTP/1.0 400 Bad Request\r\n\r\n{\"code\":\"InvalidArgument\"}", status: 400, body: `{"code":"InvalidArgument"}`},
		{name: "bare LF", in: "HTTP/1.1 201 Created\ncontent-length: 2\n\nok", status: 201, body: "ok"},
		{name: "not HTTP", in: "SSH-2.0-OpenSSH\r\n", err: "not an HTTP answer"},
		{name: "bad status", in: "HTTP/1.1 abc\r\n\r\n", err: "not an HTTP answer"},
		{name: "bad length", in: "HTTP/1.1 200 OK\r\nContent-Length: -4\r\n\r\n", err: "Content-Length"},
		{name: "too long", in: "HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n", err: "over"},
		{name: "short body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", err: "read answer body"},
		{name: "cut headers", in: "HTTP/1.1 200 OK\r\nContent-Le", err: "headers"},
		{name: "empty", in: "", err: "read answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ans, err := readAnswer(bufio.NewReader(strings.NewReader(c.in)))
			status, body := ans.status, ans.body
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil || status != c.status || string(body) != c.body {
				t.Fatalf("= %d %q %v, want %d %q", status, body, err, c.status, c.body)
			}
		})
	}
}

// serve answers each request with handler on a loopback port.
func serve(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

func TestSubmit(t *testing.T) {
	var gotAuth, gotBody string
	addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		switch {
		case r.URL.Path != jsonapi.SubmitPath || r.Method != http.MethodPost:
			w.WriteHeader(http.StatusNotFound)
		case strings.Contains(gotBody, "refuse"):
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"code":"InvalidArgument","message":"--partition=refuse: invalid partition name specified"}`)
		case strings.Contains(gotBody, "garbage"):
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html>proxy error</html>")
		default:
			io.WriteString(w, `{"jobId":"42","message":"Submitted batch job 42","expectedStart":null}`)
		}
	})
	c, err := New(addr, "pt1.tok")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resp, raw, err := c.Submit(ctx, &jsonapi.SubmitRequest{Spec: &jsonapi.JobSpec{Name: "x"}})
	if err != nil || resp.JobID != 42 || resp.Message != "Submitted batch job 42" || !strings.Contains(string(raw), `"jobId":"42"`) {
		t.Fatalf("= %+v %s %v", resp, raw, err)
	}
	if gotAuth != "Bearer pt1.tok" || gotBody != `{"spec":{"name":"x"}}` {
		t.Errorf("server got Authorization %q body %q", gotAuth, gotBody)
	}
	_, _, err = c.Submit(ctx, &jsonapi.SubmitRequest{Spec: &jsonapi.JobSpec{Partition: "refuse"}})
	var refused *Error
	if !errors.As(err, &refused) || refused.Status != 400 || refused.Code != "InvalidArgument" || !strings.Contains(refused.Message, "--partition=refuse") {
		t.Errorf("refusal = %#v", err)
	}
	_, _, err = c.Submit(ctx, &jsonapi.SubmitRequest{Spec: &jsonapi.JobSpec{Name: "garbage"}})
	if !errors.As(err, &refused) || refused.Status != 502 || !strings.Contains(refused.Message, "HTTP 502") {
		t.Errorf("non-JSON refusal = %#v", err)
	}
}

func TestSubmitUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	// A controller that accepts but never answers: the context ends the call.
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	for _, c := range []struct {
		name, addr string
		timeout    time.Duration
	}{{"nothing listens", closed, 10 * time.Second}, {"no answer", hung.Addr().String(), 200 * time.Millisecond}} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := New(c.addr, "tok")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
			defer cancel()
			_, _, err = cl.Submit(ctx, &jsonapi.SubmitRequest{Spec: &jsonapi.JobSpec{Name: "x"}})
			var down *UnavailableError
			if !errors.As(err, &down) {
				t.Fatalf("err = %v, want UnavailableError", err)
			}
		})
	}
}

func TestNewBadInput(t *testing.T) {
	if _, err := New("", "tok"); err == nil || !strings.Contains(err.Error(), "address") {
		t.Errorf("empty address: %v", err)
	}
	if _, err := New("h:1", "tok\r\nX-Evil: 1"); err == nil || !strings.Contains(err.Error(), "line break") {
		t.Errorf("token with a line break: %v", err)
	}
}

// A search backs off after as many attempts as there are controllers,
// also when a follower keeps naming a leader that is down (the search
// then goes back and forth between the two, never round the list).
func TestLeaderSearchBacksOffEveryRound(t *testing.T) {
	s := leaderSearch{addrs: []string{"a:1", "b:1", "c:1"}}
	var backOffs []bool
	for i := 0; i < 6; i++ {
		leader := ""
		if s.cur == 1 {
			leader = "a:1" // b names a, which is down
		}
		backOffs = append(backOffs, s.advance(leader))
	}
	if want := []bool{false, false, true, false, false, true}; !slices.Equal(backOffs, want) {
		t.Fatalf("backs off %v, want %v", backOffs, want)
	}
}
