// Package jsonsubmit submits jobs to the controller's HTTP/JSON endpoint
// (see scheduler/api/jsonapi): the client of the lean sbatch, which starts
// a process per job and so must not link gRPC or protobuf, whose package
// initialisation would cost more than the submission. It imports the
// standard library and jsonapi only; everything else a client does goes
// through scheduler/client (gRPC).
package jsonsubmit

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
)

// maxAnswer bounds what is read of an answer (they are a few hundred bytes).
const maxAnswer = 1 << 20

// Client posts submissions to one controller.
type Client struct {
	addr, token string
	scheme      string
	hc          *http.Client
}

// New prepares a client of the controller at addr (host:port) sending
// token; caFile, when set, is the PEM file of the CA that signed the
// controller's certificate, and the client then speaks TLS (as the gRPC
// client's --ca does).
func New(addr, token, caFile string) (*Client, error) {
	if addr == "" {
		return nil, errors.New("client: empty controller address")
	}
	// One request per process: no proxies from the environment (the
	// controller is on the cluster network, as for gRPC) and no pooling.
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true, MaxResponseHeaderBytes: 64 << 10}
	c := &Client{addr: addr, token: token, scheme: "http", hc: &http.Client{Transport: tr}}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("client: --ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client: --ca=%s: no PEM certificate in the file", caFile)
		}
		// http/1.1 by ALPN: the controller routes h2 to gRPC.
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
		c.scheme = "https"
	}
	return c, nil
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
// comes after the job is committed.
func (c *Client) Submit(ctx context.Context, req *jsonapi.SubmitRequest) (*jsonapi.SubmitResponse, []byte, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, nil, fmt.Errorf("client: encode submission: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.scheme+"://"+c.addr+jsonapi.SubmitPath, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("client: controller address %q: %w", c.addr, err)
	}
	hr.Header.Set("Content-Type", jsonapi.ContentType)
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, nil, &UnavailableError{Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, nil, &UnavailableError{Err: fmt.Errorf("read answer: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		var body jsonapi.Error
		if json.Unmarshal(raw, &body) != nil || body.Message == "" {
			body = jsonapi.Error{Code: "Unknown", Message: fmt.Sprintf("controller answered %s: %.200s", resp.Status, raw)}
		}
		return nil, nil, &Error{Status: resp.StatusCode, Code: body.Code, Message: body.Message}
	}
	var out jsonapi.SubmitResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, nil, fmt.Errorf("client: controller's answer is not a SubmitResponse: %w: %.200s", err, raw)
	}
	return &out, raw, nil
}

// DefaultTimeout bounds one submission, as the user verbs bound their calls
// (Slurm's MessageTimeout).
const DefaultTimeout = 60 * time.Second
