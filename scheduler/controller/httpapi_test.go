package controller

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
)

// postSubmit posts body to the controller's HTTP submit endpoint with
// the Authorization header auth ("" for none).
func postSubmit(t *testing.T, hc *http.Client, url, authz, method string, body []byte) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url+jsonapi.SubmitPath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	req.Header.Set("Content-Type", jsonapi.ContentType)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, jsonapi.SubmitPath, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func jsonBody(t *testing.T, req jsonapi.SubmitRequest) []byte {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func httpJob(name string, gpus int64) *jsonapi.JobSpec {
	return &jsonapi.JobSpec{Name: name, Partition: "gpu", Script: "#!/bin/sh\necho " + name + "\n", Env: map[string]string{"SECRET": "s3cr3t"},
		GRES: &jsonapi.GRESRequest{PerNode: []jsonapi.GRESTerm{{Name: "gpu", Count: gpus}}}, TimeLimitSeconds: 600}
}

func TestHTTPSubmitRefuses(t *testing.T) {
	h := startController(t, testCluster)
	url := "http://" + h.c.Addr()
	alice := "Bearer " + h.token("alice", auth.RoleUser, "")
	good := jsonBody(t, jsonapi.SubmitRequest{Spec: httpJob("ok", 1)})
	with := func(mod func(*jsonapi.JobSpec)) []byte {
		s := httpJob("bad", 1)
		mod(s)
		return jsonBody(t, jsonapi.SubmitRequest{Spec: s})
	}
	cases := []struct {
		name, authz, method string
		body                []byte
		status              int
		code, msg           string
	}{
		{"no token", "", http.MethodPost, good, http.StatusUnauthorized, "Unauthenticated", "no token"},
		{"not a bearer token", "Basic YWxpY2U6eA==", http.MethodPost, good, http.StatusUnauthorized, "Unauthenticated", "Bearer"},
		{"forged token", "Bearer " + strings.Repeat("x", 40), http.MethodPost, good, http.StatusUnauthorized, "Unauthenticated", "authentication failure"},
		{"agent credential", "Bearer " + h.token("n1", auth.RoleAgent, "n1"), http.MethodPost, good, http.StatusForbidden, "PermissionDenied", "agent credential"},
		{"GET", alice, http.MethodGet, nil, http.StatusMethodNotAllowed, "Unimplemented", "use POST"},
		{"not JSON", alice, http.MethodPost, []byte("#!/bin/sh\n"), http.StatusBadRequest, "InvalidArgument", "not a JSON SubmitRequest"},
		{"unknown field", alice, http.MethodPost, []byte(`{"spec":{"name":"x","gpuz":2}}`), http.StatusBadRequest, "InvalidArgument", "gpuz"},
		{"no spec", alice, http.MethodPost, []byte(`{}`), http.StatusBadRequest, "InvalidArgument", "no job spec"},
		{"no such partition", alice, http.MethodPost, with(func(s *jsonapi.JobSpec) { s.Partition = "nosuch" }),
			http.StatusBadRequest, "InvalidArgument", "nosuch"},
		{"more GPUs than a node has", alice, http.MethodPost, with(func(s *jsonapi.JobSpec) { s.GRES.PerNode[0].Count = 9 }),
			http.StatusBadRequest, "InvalidArgument", "9"},
		{"time over the partition's", alice, http.MethodPost, with(func(s *jsonapi.JobSpec) { s.TimeLimitSeconds = 3 * 86400 }),
			http.StatusBadRequest, "", "time"},
		{"body too big", alice, http.MethodPost, bytes.Repeat([]byte(" "), maxMsgSubmit+1), http.StatusRequestEntityTooLarge, "ResourceExhausted", "over"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, b := postSubmit(t, http.DefaultClient, url, c.authz, c.method, c.body)
			var e jsonapi.Error
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("status %d, body not a JSON error: %v: %s", st, err, b)
			}
			if st != c.status || (c.code != "" && e.Code != c.code) || !strings.Contains(strings.ToLower(e.Message), strings.ToLower(c.msg)) {
				t.Errorf("status %d code %q message %q; want %d %q containing %q", st, e.Code, e.Message, c.status, c.code, c.msg)
			}
		})
	}
	jobs, err := h.as("root", auth.RoleAdmin).ListJobs(context.Background(), nil)
	if err != nil || len(jobs) != 0 {
		t.Fatalf("refused submissions queued jobs: %v %v", jobs, err)
	}
}

// TestHTTPSubmitDurable: an answered submission is committed (it is there
// after a restart, script and environment included), ids are shared with
// gRPC submissions, and --test-only queues nothing.
func TestHTTPSubmitDurable(t *testing.T) {
	h := startController(t, testCluster)
	alice := "Bearer " + h.token("alice", auth.RoleUser, "")
	post := func(req jsonapi.SubmitRequest) jsonapi.SubmitResponse {
		t.Helper()
		st, b := postSubmit(t, http.DefaultClient, "http://"+h.c.Addr(), alice, http.MethodPost, jsonBody(t, req))
		var resp jsonapi.SubmitResponse
		if err := json.Unmarshal(b, &resp); st != http.StatusOK || err != nil {
			t.Fatalf("status %d (%v): %s", st, err, b)
		}
		return resp
	}
	test := post(jsonapi.SubmitRequest{Spec: httpJob("probe", 2), TestOnly: true})
	if test.JobID != 1 || test.Partition != "gpu" || !strings.HasPrefix(test.Message, "Job 1 ") {
		t.Fatalf("test-only answered %+v", test)
	}
	first := post(jsonapi.SubmitRequest{Spec: httpJob("first", 2)})
	grpcID := h.submit(h.as("alice", auth.RoleUser), gpuJob("second", 1))
	third := post(jsonapi.SubmitRequest{Spec: httpJob("third", 4)})
	if first.JobID != 1 || grpcID != 2 || third.JobID != 3 || first.Message != "Submitted batch job 1" {
		t.Fatalf("ids %d, %d (gRPC), %d; message %q", first.JobID, grpcID, third.JobID, first.Message)
	}
	h.restart()
	for id, name := range map[uint64]string{1: "first", 2: "second", 3: "third"} {
		j, err := h.as("alice", auth.RoleUser).GetJob(context.Background(), id, true)
		if err != nil {
			t.Fatalf("job %d after restart: %v", id, err)
		}
		if j.GetSpec().GetName() != name || j.GetUser() != "alice" || j.GetState() != StatePending ||
			j.GetSpec().GetEnv()["SECRET"] != "s3cr3t" || !strings.Contains(j.GetSpec().GetScript(), "echo "+name) {
			t.Errorf("job %d after restart: %v", id, j)
		}
	}
	if g := h.job(3).GetSpec().GetGres().GetPerNode(); len(g) != 1 || g[0].GetCount() != 4 {
		t.Errorf("job 3's GRES after restart: %v", g)
	}
}

// TestHTTPSubmitTLS: with TLS the HTTP API is on the same address and
// certificate as gRPC (TestTLSListener covers gRPC); plain HTTP is refused.
func TestHTTPSubmitTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, "controller")
	cfg, err := config.Parse("test.yaml", []byte(testCluster))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: t.TempDir(), MetricsAddr: "off", NoScheduler: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), TLSCert: cert, TLSKey: key})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tok, err := auth.Sign(c.Key(), auth.Claims{User: "alice", Role: auth.RoleUser, IssuedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	body := jsonBody(t, jsonapi.SubmitRequest{Spec: httpJob("tls", 1)})
	st, b := postSubmit(t, hc, "https://"+c.Addr(), "Bearer "+tok, http.MethodPost, body)
	if want := `{"jobId":"1","message":"Submitted batch job 1","expectedStart":null,"warnings":[],"nodes":[],"partition":"","cpus":0,"pendingReason":"","noNodes":false}` + "\n"; st != http.StatusOK || string(b) != want {
		t.Fatalf("over TLS: %d %s", st, b)
	}
	// A client that offers HTTP/2 as well (curl, browsers) is served too.
	both := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	st, b = postSubmit(t, both, "https://"+c.Addr(), "Bearer "+tok, http.MethodPost, jsonBody(t, jsonapi.SubmitRequest{Spec: httpJob("tls2", 1)}))
	if !strings.Contains(string(b), `"jobId":"2"`) || st != http.StatusOK {
		t.Fatalf("over TLS, offering h2 and http/1.1: %d %s", st, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+c.Addr()+jsonapi.SubmitPath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP to a TLS controller was served")
		}
	}
}

func TestHTTPSubmitWithAKeyIsIdempotent(t *testing.T) {
	h := startController(t, testCluster)
	alice := "Bearer " + h.token("alice", auth.RoleUser, "")
	post := func(name string) uint64 {
		t.Helper()
		body := jsonBody(t, jsonapi.SubmitRequest{Spec: httpJob(name, 1), IdempotencyKey: "retry-1"})
		st, b := postSubmit(t, http.DefaultClient, "http://"+h.c.Addr(), alice, http.MethodPost, body)
		var resp jsonapi.SubmitResponse
		if err := json.Unmarshal(b, &resp); st != http.StatusOK || err != nil {
			t.Fatalf("status %d (%v): %s", st, err, b)
		}
		return resp.JobID
	}
	first := post("once")
	h.restart() // the key is on the job's record, not only in memory
	if again := post("once"); again != first {
		t.Fatalf("the same key sent again created job %d; the first was %d", again, first)
	}
	jobs, err := h.as("root", auth.RoleAdmin).ListJobs(context.Background(), nil)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("%d jobs (%v), want 1", len(jobs), err)
	}
}
