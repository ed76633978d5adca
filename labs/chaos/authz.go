package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// path is how a matrix cell reaches the controller.
type path string

const (
	viaGRPC path = "gRPC"
	viaCLI  path = "CLI"
	viaHTTP path = "HTTP"
)

// identity is who a cell acts as.
type identity struct {
	name string // in the matrix: user, operator, admin, anonymous, garbage, expired, agent
	user string
	// token returns the bearer token ("" for none).
	token func(l *lab) string
}

func identities() map[string]identity {
	return map[string]identity{
		"user":      {"user", userAlice, func(l *lab) string { return l.token(userAlice, auth.RoleUser) }},
		"operator":  {"operator", userOpal, func(l *lab) string { return l.token(userOpal, auth.RoleOperator) }},
		"admin":     {"admin", "admin", func(l *lab) string { return l.token("admin", auth.RoleAdmin) }},
		"anonymous": {"anonymous", "", func(*lab) string { return "" }},
		"garbage":   {"garbage", "", func(*lab) string { return "pt1.Z2FyYmFnZQ.bm90IGEgc2lnbmF0dXJl" }},
		"expired":   {"expired", userAlice, func(l *lab) string { return l.expiredToken(userAlice) }},
		"agent": {"agent", "agent:cpu2", func(l *lab) string {
			tok, _ := auth.Sign(l.key, auth.Claims{User: "agent:cpu2", Role: auth.RoleAgent, Node: "cpu2", IssuedAt: time.Now()})
			return tok
		}},
	}
}

// want is a cell's expected decision: allowed, or refused with code
// (checked on gRPC and HTTP; the CLI's exit status says only "refused").
type want struct {
	allow bool
	code  codes.Code
}

var allowed = want{allow: true}

func refused(c codes.Code) want { return want{code: c} }

// outcome is what a cell saw: the answer and whether the action took
// effect (checked by an admin afterwards; reads have no effect to check).
type outcome struct {
	ok        bool       // the call succeeded (exit status 0, HTTP 2xx)
	code      codes.Code // the refusal's code (gRPC, HTTP)
	msg       string
	effect    bool
	hasEffect bool // the action has an effect to check
}

// judgeCell says whether an outcome is the decision wanted, and if not, how.
func judgeCell(w want, o outcome, p path) (bool, string) {
	switch {
	case w.allow && !o.ok:
		return false, fmt.Sprintf("refused (%s: %s), want allowed", o.code, o.msg)
	case w.allow && o.hasEffect && !o.effect:
		return false, "answered OK but had no effect"
	case w.allow:
		return true, ""
	case o.effect:
		return false, fmt.Sprintf("took effect (answer: %v %s), want refused with %s", o.ok, o.code, w.code)
	case o.ok && (p != viaCLI || !o.hasEffect):
		// The CLI answers a cancel of an unknown id (and so of another
		// user's job, which must look unknown) with success, as scancel
		// does; for an action with an effect, what counts there is that
		// nothing happened.
		return false, fmt.Sprintf("answered OK, want refused with %s", w.code)
	case p != viaCLI && w.code != codes.OK && o.code != w.code:
		return false, fmt.Sprintf("refused with %s (%s), want %s", o.code, o.msg, w.code)
	}
	return true, ""
}

// runAuthz runs the authorisation matrix: every action as every identity
// it names, over every path it names.
func runAuthz(ctx context.Context, l *lab, o *Options) []Row {
	row := Row{Scenario: "authorisation matrix (CLI, gRPC, HTTP)"}
	ids := identities()
	home, err := os.MkdirTemp(l.dir, "home-")
	if err != nil {
		row.fail("%v", err)
		return []Row{row}
	}
	right := 0
	for n, a := range authzActions() {
		for _, who := range a.whoOrder() {
			for _, p := range a.paths {
				c := cell{l: l, id: ids[who], path: p, home: home, seq: n}
				o, err := c.run(ctx, a)
				row.Cases++
				if err != nil {
					row.fail("%s as %s over %s: could not run: %v", a.name, who, p, err)
					continue
				}
				if ok, why := judgeCell(a.who[who], o, p); ok {
					right++
				} else {
					row.fail("%s as %s over %s: %s", a.name, who, p, why)
				}
			}
		}
	}
	o.progressf("authz: %d of %d decisions as wanted", right, row.Cases)
	row.add("refusals correct", fmt.Sprintf("%d of %d", right, row.Cases))
	return []Row{row}
}

// cell is one action as one identity over one path.
type cell struct {
	l    *lab
	id   identity
	path path
	home string // an empty HOME for the CLI, so no token file is found
	seq  int
}

func (c *cell) run(ctx context.Context, a action) (outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t, err := a.setup(ctx, c)
	if err != nil {
		return outcome{}, fmt.Errorf("set up: %w", err)
	}
	var o outcome
	switch c.path {
	case viaGRPC:
		o, err = c.grpc(ctx, a, t)
	case viaCLI:
		o, err = c.cli(ctx, a.cli(t))
	case viaHTTP:
		o, err = c.http(ctx, a.body(t))
	}
	if err != nil {
		return o, err
	}
	if a.effect != nil {
		o.hasEffect = true
		if o.effect, err = a.effect(ctx, c.l, t); err != nil {
			return o, fmt.Errorf("check its effect: %w", err)
		}
	}
	if a.undo != nil {
		a.undo(ctx, c.l, t)
	}
	return o, nil
}

func (c *cell) grpc(ctx context.Context, a action, t *target) (outcome, error) {
	cl, err := client.Dial(ctx, c.l.p.Addr, c.id.token(c.l))
	if err != nil {
		return outcome{}, err
	}
	defer cl.Close()
	err = a.grpc(ctx, cl, t)
	st := status.Convert(err)
	return outcome{ok: err == nil, code: st.Code(), msg: st.Message()}, nil
}

// cli runs `parity ARGS` with only the controller's address and the
// identity's token in its environment.
func (c *cell) cli(ctx context.Context, args []string) (outcome, error) {
	cmd := exec.CommandContext(ctx, c.l.exe, args...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + c.home, "USER=" + c.id.user,
		client.EnvController + "=" + c.l.p.Addr}
	if tok := c.id.token(c.l); tok != "" {
		cmd.Env = append(cmd.Env, client.EnvToken+"="+tok)
	}
	cmd.Dir = c.home
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		return outcome{}, err
	}
	return outcome{ok: err == nil, msg: strings.TrimSpace(string(out))}, nil
}

// http posts a submission to the JSON API.
func (c *cell) http(ctx context.Context, body []byte) (outcome, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+c.l.p.Addr+jsonapi.SubmitPath, bytes.NewReader(body))
	if err != nil {
		return outcome{}, err
	}
	req.Header.Set("Content-Type", jsonapi.ContentType)
	if tok := c.id.token(c.l); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	code, msg, err := postJSON(req)
	return outcome{ok: err == nil && code == codes.OK, code: code, msg: msg}, err
}

// postJSON sends req and returns the answer's code (the error body's
// "code", OK for a 2xx) and message.
func postJSON(req *http.Request) (codes.Code, string, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return codes.Unknown, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return codes.Unknown, "", err
	}
	if resp.StatusCode/100 == 2 {
		return codes.OK, strings.TrimSpace(string(b)), nil
	}
	var e jsonapi.Error
	if err := json.Unmarshal(b, &e); err != nil {
		return codes.Unknown, fmt.Sprintf("HTTP %d, not a JSON error: %q", resp.StatusCode, b), nil
	}
	c, ok := codeNamed(e.Code)
	if !ok {
		return codes.Unknown, fmt.Sprintf("HTTP %d, code %q: %s", resp.StatusCode, e.Code, e.Message), nil
	}
	return c, e.Message, nil
}

// codeNamed is the code whose String() is name, as the JSON API's error
// body carries it.
func codeNamed(name string) (codes.Code, bool) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if c.String() == name {
			return c, true
		}
	}
	return codes.Unknown, false
}

// submitBody is a SubmitRequest as the JSON API takes it; nil for one
// JSON cannot carry (a time past year 9999).
func submitBody(spec *pb.JobSpec) []byte {
	b, err := protojson.Marshal(&pb.SubmitRequest{Spec: spec})
	if err != nil {
		return nil
	}
	return b
}
