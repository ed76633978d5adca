package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/scheduler/rest"
)

const specFile = "contract/slurm-openapi-v0.0.44.json"

// contract is the OpenAPI document and a router over its paths.
type contract struct {
	doc    *openapi3.T
	router routers.Router
}

func loadContract(tb testing.TB) *contract {
	tb.Helper()
	raw, err := os.ReadFile(specFile)
	if err != nil {
		tb.Fatal(err)
	}
	return contractFrom(tb, specFile, raw)
}

func contractFrom(tb testing.TB, name string, raw []byte) *contract {
	tb.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		tb.Fatalf("load %s: %v", name, err)
	}
	// The document names no servers; requests are matched on their path.
	doc.Servers = openapi3.Servers{{URL: "/"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		tb.Fatalf("router over %s: %v", name, err)
	}
	return &contract{doc: doc, router: router}
}

// servedContract is the document the controller serves: Parity's own
// paths are checked against it (read once per cluster, when first asked).
func (c *cluster) servedContract(tb testing.TB) *contract {
	tb.Helper()
	if c.served == nil {
		resp, err := c.http.Get(c.base + rest.OpenAPIPath)
		if err != nil {
			tb.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			tb.Fatalf("GET %s: %d %v", rest.OpenAPIPath, resp.StatusCode, err)
		}
		c.served = contractFrom(tb, rest.OpenAPIPath, raw)
	}
	return c.served
}

// cluster is a real controller on an OS-chosen port with the REST API.
type cluster struct {
	ctrl     *controller.Controller
	base     string
	contract *contract
	served   *contract // the served document, for Parity's own paths
	http     *http.Client
	// skipRequestCheck marks requests built to break the schema on purpose.
	skipRequestCheck bool
}

const clusterYAML = `cluster: lab
admins: [root]
operators: [op]
partitions:
  - name: gpu
    nodes: n[1-2]
    default: true
nodes:
  - names: n[1-2]
    cpus: 16
    memory: 64G
    gpus: 4
    gpuType: h100
accounts:
  - name: physics
    shares: 40
    users: [alice, {name: bob, shares: 2}]
  - name: bio
    shares: 60
    users: [dave]
qos:
  - name: normal
  - name: high
    priority: 100
`

func startCluster(tb testing.TB) *cluster { return startClusterWith(tb, nil) }

// startClusterWith lets the test change the controller's options.
func startClusterWith(tb testing.TB, change func(*controller.Options)) *cluster {
	tb.Helper()
	cfg, err := config.Parse("lab.yaml", []byte(clusterYAML))
	if err != nil {
		tb.Fatal(err)
	}
	opts := controller.Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: tb.TempDir(), MetricsAddr: "off",
		NoScheduler: true, Version: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if change != nil {
		change(&opts)
	}
	c, err := controller.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return &cluster{ctrl: c, base: "http://" + c.Addr(), contract: loadContract(tb), http: &http.Client{Timeout: 30 * time.Second}}
}

func (c *cluster) token(tb testing.TB, user string, role auth.Role) string {
	tb.Helper()
	tok, err := auth.Sign(c.ctrl.Key(), auth.Claims{User: user, Role: role, IssuedAt: time.Now()})
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// answer is one response, already checked against the document.
type answer struct {
	code int
	body []byte
	obj  map[string]any
}

func (a answer) errorText() string {
	errs, _ := a.obj["errors"].([]any)
	var out []string
	for _, e := range errs {
		m, _ := e.(map[string]any)
		d, _ := m["description"].(string)
		out = append(out, d)
	}
	return strings.Join(out, "; ")
}

// do sends a request with slurmrestd's auth/jwt headers (token may be
// empty), checks the request (unless it is bad on purpose) and the answer
// against the document, and decodes the answer.
func (c *cluster) do(tb testing.TB, method, path, token string, body []byte) answer {
	tb.Helper()
	return c.doHeaders(tb, method, path, body, map[string]string{"X-SLURM-USER-TOKEN": token})
}

func (c *cluster) doHeaders(tb testing.TB, method, path string, body []byte, headers map[string]string) answer {
	tb.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	input := c.contract.requestInput(tb, req, body)
	if input == nil && strings.HasPrefix(req.URL.Path, rest.ParityPrefix) {
		input = c.servedContract(tb).requestInput(tb, req, body)
		if input == nil && !c.skipRequestCheck {
			tb.Fatalf("%s %s: not in the served document", method, path)
		}
	}
	if input != nil && !c.skipRequestCheck {
		if err := openapi3filter.ValidateRequest(context.Background(), input); err != nil {
			tb.Fatalf("%s %s: the test's request breaks the document: %v", method, path, err)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	a := answer{code: resp.StatusCode, body: got}
	if err := json.Unmarshal(got, &a.obj); err != nil {
		tb.Fatalf("%s %s: answer %d is not a JSON object: %v: %q", method, path, resp.StatusCode, err, got)
	}
	if input == nil {
		input = c.contract.routeFor(tb, method, path, req)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: input, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	out.SetBodyBytes(got)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		tb.Fatalf("%s %s: answer %d breaks the document: %v\n%s", method, path, resp.StatusCode, err, got)
	}
	for _, k := range []string{"meta", "errors", "warnings"} {
		if _, ok := a.obj[k]; !ok {
			tb.Fatalf("%s %s: answer has no %q: %s", method, path, k, got)
		}
	}
	return a
}

// requestInput finds the document's route for req; nil when the path is
// not in the document (the answer is then checked as the envelope).
func (ct *contract) requestInput(tb testing.TB, req *http.Request, body []byte) *openapi3filter.RequestValidationInput {
	tb.Helper()
	r2 := req.Clone(context.Background())
	if !strings.HasSuffix(r2.URL.Path, "/") {
		if _, _, err := ct.router.FindRoute(r2); err != nil {
			r2.URL.Path += "/"
		}
	}
	route, params, err := ct.router.FindRoute(r2)
	if err != nil {
		return nil
	}
	r2.Body = io.NopCloser(bytes.NewReader(body))
	return &openapi3filter.RequestValidationInput{Request: r2, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
}

// routeFor is the route an answer to a path outside the document is
// checked against: the bare envelope, v0.0.44_openapi_resp, which the
// reconfigure operation answers.
func (ct *contract) routeFor(tb testing.TB, method, path string, req *http.Request) *openapi3filter.RequestValidationInput {
	tb.Helper()
	r2, _ := http.NewRequest(http.MethodGet, "/slurm/v0.0.44/reconfigure/", nil)
	route, params, err := ct.router.FindRoute(r2)
	if err != nil {
		tb.Fatalf("no reconfigure route to check %s %s against: %v", method, path, err)
	}
	return &openapi3filter.RequestValidationInput{Request: r2, PathParams: params, Route: route}
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestContractCopy keeps the embedded document identical to the shared one
// when the shared reference is beside the module.
func TestContractCopy(t *testing.T) {
	shared := filepath.Join("..", "..", "..", "shared", "reference", "slurmrestd", "slurm-openapi-v0.0.44.json")
	want, err := os.ReadFile(shared)
	if err != nil {
		t.Skipf("SKIPPING: %s is absent (%v); the embedded copy was not compared", shared, err)
	}
	got, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from %s: copy it again", specFile, shared)
	}
}
