// Package jsonsubmit submits jobs to the controller's HTTP/JSON endpoint
// (see scheduler/api/jsonapi): the client of the lean sbatch, which starts
// a process per job and so must not link gRPC or protobuf, whose package
// initialisation would cost more than the submission. It speaks just
// enough HTTP/1.0 over plain TCP for one request (net/http and crypto/tls
// would cost a few milliseconds of start-up on each process); a client of
// a controller that serves TLS uses the gRPC client instead. It imports
// the standard library, jsonapi and clientenv only.
package jsonsubmit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
)

// maxAnswer bounds what is read of an answer (they are a few hundred bytes).
const maxAnswer = 1 << 20

// DefaultTimeout bounds one submission, as the user verbs bound their
// calls (Slurm's MessageTimeout).
const DefaultTimeout = 60 * time.Second

// Client posts submissions to a controller, or to the leader of several,
// over plain TCP.
type Client struct {
	addrs  []string
	token  string
	budget time.Duration // how long a list is searched for its leader
}

// New prepares a client of the controller at addr (host:port), or of the
// controllers of a comma-separated list (see failover.go), sending token.
// The token must be one line (it goes in a header).
func New(addr, token string) (*Client, error) {
	addrs := clientenv.SplitControllers(addr)
	if len(addrs) == 0 {
		return nil, errors.New("client: empty controller address")
	}
	if strings.ContainsAny(token, "\r\n") {
		return nil, errors.New("client: the token contains a line break")
	}
	return &Client{addrs: addrs, token: token, budget: FailoverBudget}, nil
}

// Error is the controller's refusal: its message, the gRPC code's name
// and the HTTP status.
type Error struct {
	Status  int
	Code    string // "InvalidArgument", "Unauthenticated", ...
	Message string
}

func (e *Error) Error() string { return e.Message }

// UnavailableError is a controller that could not be reached or did not
// answer: the message says what happened.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return "controller unavailable: " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// Submit posts req and returns the controller's answer, decoded and as
// sent (proto3 JSON with every field, what `--json` prints). The answer
// comes after the job is committed. Given several controllers it goes to
// the leader and carries an idempotency key, so a submission sent again
// after a lost answer creates no second job.
func (c *Client) Submit(ctx context.Context, req *jsonapi.SubmitRequest) (*jsonapi.SubmitResponse, []byte, error) {
	if len(c.addrs) > 1 && req.IdempotencyKey == "" {
		keyed := *req
		keyed.IdempotencyKey = rand.Text()
		req = &keyed
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, nil, fmt.Errorf("client: encode submission: %w", err)
	}
	ans, err := c.postToLeader(ctx, jsonapi.SubmitPath, body)
	if err != nil {
		return nil, nil, err
	}
	if ans.status != 200 {
		return nil, nil, refusal(ans)
	}
	var out jsonapi.SubmitResponse
	if err := json.Unmarshal(ans.body, &out); err != nil {
		return nil, nil, fmt.Errorf("client: controller's answer is not a SubmitResponse: %w: %.200s", err, ans.body)
	}
	return &out, ans.body, nil
}

// refusal is the controller's error answer as an *Error.
func refusal(ans answer) *Error {
	var e jsonapi.Error
	if json.Unmarshal(ans.body, &e) != nil || e.Message == "" {
		e = jsonapi.Error{Code: "Unknown", Message: fmt.Sprintf("controller answered HTTP %d: %.200s", ans.status, ans.body)}
	}
	return &Error{Status: ans.status, Code: e.Code, Message: e.Message}
}

// post sends one HTTP/1.0 request (so the answer ends with the connection
// and is never chunked) and returns the status and body.
func (c *Client) post(ctx context.Context, addr, path string, body []byte) (answer, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return answer{}, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(dl); err != nil {
			return answer{}, err
		}
	}
	// A cancelled context ends a read or write in progress.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var b bytes.Buffer
	b.Grow(256 + len(body))
	fmt.Fprintf(&b, "POST %s HTTP/1.0\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n", path, addr, jsonapi.ContentType, len(body))
	if c.token != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", c.token)
	}
	b.WriteString("\r\n")
	b.Write(body)
	if _, err := conn.Write(b.Bytes()); err != nil {
		return answer{}, ctxErr(ctx, fmt.Errorf("send: %w", err))
	}
	ans, err := readAnswer(bufio.NewReader(conn))
	return ans, ctxErr(ctx, err)
}

// ctxErr prefers the context's error to the deadline it caused.
func ctxErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}

// answer is what readAnswer keeps of an HTTP answer.
type answer struct {
	status int
	body   []byte
	leader string // a follower's jsonapi.LeaderHeader
}

// readAnswer reads an HTTP/1.x response: the status line, the headers
// (Content-Length and the leader's name matter) and the body.
func readAnswer(r *bufio.Reader) (answer, error) {
	var ans answer
	line, err := r.ReadString('\n')
	if err != nil {
		return answer{}, fmt.Errorf("read answer: %w", err)
	}
	proto, rest, _ := strings.Cut(strings.TrimRight(line, "\r\n"), " ")
	code, _, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	ans.status = status
	if !strings.HasPrefix(proto, "HTTP/1.") || err != nil || status < 100 || status > 999 {
		return answer{}, fmt.Errorf("not an HTTP answer: %.80q", line)
	}
	length := int64(-1)
	for {
		h, err := r.ReadString('\n')
		if err != nil {
			return answer{}, fmt.Errorf("read answer headers: %w", err)
		}
		h = strings.TrimRight(h, "\r\n")
		if h == "" {
			break
		}
		name, value, _ := strings.Cut(h, ":")
		if strings.EqualFold(strings.TrimSpace(name), jsonapi.LeaderHeader) {
			ans.leader = strings.TrimSpace(value)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			if length, err = strconv.ParseInt(strings.TrimSpace(value), 10, 64); err != nil || length < 0 {
				return answer{}, fmt.Errorf("answer's Content-Length %q", value)
			}
		}
	}
	if length > maxAnswer {
		return answer{}, fmt.Errorf("answer of %d bytes is over %d", length, maxAnswer)
	}
	if length >= 0 {
		ans.body = make([]byte, length)
		_, err = io.ReadFull(r, ans.body)
	} else {
		ans.body, err = io.ReadAll(io.LimitReader(r, maxAnswer))
	}
	if err != nil {
		return answer{}, fmt.Errorf("read answer body: %w", err)
	}
	return ans, nil
}
