package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/controller"
)

// TestParityExplain: the owner gets the scheduler's explanation of her
// pending job (reason, text, an expected start object, suggestions and,
// asked, the decision-log history); another user's job is not found, as
// over gRPC; bad parameters are named.
func TestParityExplain(t *testing.T) {
	c := startCluster(t)
	alice, bob := c.token(t, "alice", auth.RoleUser), c.token(t, "bob", auth.RoleUser)
	id := c.submit(t, alice, "why")
	for _, hold := range []string{`{"hold":true}`, `{"hold":false}`} {
		if a := c.do(t, "POST", fmt.Sprintf("/slurm/v0.0.44/job/%d", id), alice, []byte(hold)); a.code != http.StatusOK {
			t.Fatalf("hold %s: %d %s", hold, a.code, a.body)
		}
	}
	a := c.do(t, "GET", fmt.Sprintf("/parity/v1/explain/%d?history=true", id), alice, nil)
	ex, _ := a.obj["explanation"].(map[string]any)
	if a.code != http.StatusOK || ex == nil {
		t.Fatalf("explain: %d %s", a.code, a.body)
	}
	if ex["job_id"] != float64(id) || ex["reason"] == "" || !strings.Contains(ex["text"].(string), fmt.Sprint(id)) {
		t.Errorf("explanation: job_id %v reason %q text %q", ex["job_id"], ex["reason"], ex["text"])
	}
	if st := ex["job_state"].([]any); len(st) == 0 || st[0] != "PENDING" {
		t.Errorf("job_state %v, want PENDING", st)
	}
	hist, _ := ex["history"].([]any)
	if len(hist) != 2 || hist[0].(map[string]any)["kind"] != "hold" || hist[1].(map[string]any)["kind"] != "release" || hist[0].(map[string]any)["job_id"] != float64(id) {
		t.Errorf("history %v: want the hold and the release", hist)
	}
	want, err := c.grpc(t, "alice", auth.RoleUser).ExplainJob(context.Background(), uint64(id), false)
	if err != nil {
		t.Fatal(err)
	}
	if ex["text"] != want.GetText() || ex["reason"] != want.GetReason() {
		t.Errorf("REST says %q (%v); gRPC says %q (%v)", ex["text"], ex["reason"], want.GetText(), want.GetReason())
	}
	for _, tt := range []struct {
		path, tok string
		code      int
		want      string
	}{
		{fmt.Sprintf("/parity/v1/explain/%d", id), bob, 404, "invalid job id"},
		{"/parity/v1/explain/abc", alice, 400, `job_id="abc"`},
		{fmt.Sprintf("/parity/v1/explain/%d?history=maybe", id), alice, 400, `history="maybe"`},
		{fmt.Sprintf("/parity/v1/explain/%d", id), "", 401, "no token"},
	} {
		if a := c.do(t, "GET", tt.path, tt.tok, nil); a.code != tt.code || !strings.Contains(a.errorText(), tt.want) {
			t.Errorf("GET %s: %d %s; want %d with %q", tt.path, a.code, a.body, tt.code, tt.want)
		}
	}
}

// registerGPUs registers n1's agent with four GPUs and sends one
// telemetry sample of GPU-n1-0.
func registerGPUs(t *testing.T, c *cluster, at time.Time) {
	t.Helper()
	ctx := context.Background()
	agent := c.grpcAgent(t, "n1")
	if _, err := agent.Register(ctx, &pb.RegisterRequest{Node: "n1", Inventory: api.InventoryToProto(inventory("n1")), AgentVersion: "test"}); err != nil {
		t.Fatal(err)
	}
	s := &pb.Sample{Uuid: "GPU-n1-0", Time: api.Timestamp(at), UtilizationPct: 87.5, MemoryUsedBytes: 40 << 30, MemoryTotalBytes: 80 << 30,
		TemperatureC: 61, PowerW: 350, Missing: []string{"power"}}
	if _, err := agent.Heartbeat(ctx, &pb.HeartbeatRequest{Node: "n1", Samples: []*pb.Sample{s}}); err != nil {
		t.Fatal(err)
	}
}

// TestParityGPUsAndEvents: a drained GPU shows its state, reason and
// author, a sampled one its latest sample; the decision log answers by
// GPU, node, kind, job and time, and a user does not see another user's
// job entries.
func TestParityGPUsAndEvents(t *testing.T) {
	c := startCluster(t)
	sampled := time.Unix(1_900_000_000, 0)
	registerGPUs(t, c, sampled)
	op := c.grpc(t, "op", auth.RoleUser)
	if _, err := op.UpdateNodes(context.Background(), &pb.UpdateNodeRequest{Nodes: "n1", State: "DRAIN", Reason: "ecc storm", Devices: []string{"GPU-n1-1"}}); err != nil {
		t.Fatal(err)
	}
	alice, bob, root := c.token(t, "alice", auth.RoleUser), c.token(t, "bob", auth.RoleUser), c.token(t, "root", auth.RoleAdmin)
	a := c.do(t, "GET", "/parity/v1/gpus?node=n1", alice, nil)
	gpus := rows(a, "gpus")
	if a.code != http.StatusOK || len(gpus) != 4 {
		t.Fatalf("gpus: %d %s", a.code, a.body)
	}
	byUUID := map[string]map[string]any{}
	for _, g := range gpus {
		byUUID[g["uuid"].(string)] = g
	}
	if g := byUUID["GPU-n1-1"]; g["state"] != "drain" || g["drain_reason"] != "ecc storm" || g["drained_by"] != "op" || g["node"] != "n1" {
		t.Errorf("drained GPU: %v", g)
	}
	s, _ := byUUID["GPU-n1-0"]["last_sample"].(map[string]any)
	if s == nil || s["utilization_pct"] != 87.5 || s["time"].(map[string]any)["number"] != float64(sampled.Unix()) || s["missing"].([]any)[0] != "power" {
		t.Errorf("sampled GPU: %v", byUUID["GPU-n1-0"])
	}
	if _, ok := byUUID["GPU-n1-2"]["last_sample"]; ok || byUUID["GPU-n1-2"]["state"] != "idle" {
		t.Errorf("unsampled idle GPU: %v", byUUID["GPU-n1-2"])
	}
	if a := c.do(t, "GET", "/parity/v1/gpus?node=n2", alice, nil); len(rows(a, "gpus")) != 0 {
		t.Errorf("n2 registered no GPUs: %s", a.body)
	}

	mine := c.submit(t, alice, "mine")
	if a := c.do(t, "DELETE", fmt.Sprintf("/slurm/v0.0.44/job/%d", mine), alice, nil); a.code != http.StatusOK {
		t.Fatalf("cancel: %d %s", a.code, a.body)
	}
	kinds := func(a answer) string {
		var out []string
		for _, e := range rows(a, "events") {
			out = append(out, fmt.Sprintf("%v:%v", e["kind"], e["job_id"]))
		}
		return strings.Join(out, " ")
	}
	a = c.do(t, "GET", "/parity/v1/events?gpu=GPU-n1-1", root, nil)
	if ev := rows(a, "events"); len(ev) != 1 || ev[0]["kind"] != "drain" || ev[0]["devices"].([]any)[0] != "GPU-n1-1" || ev[0]["actor"] != "op" {
		t.Fatalf("events for GPU-n1-1: %s", a.body)
	}
	if a := c.do(t, "GET", "/parity/v1/events?gpu=GPU-n1-2", root, nil); len(rows(a, "events")) != 0 {
		t.Errorf("events for an untouched GPU: %s", a.body)
	}
	tests := []struct {
		query, tok, want string
	}{
		{"kind=cancel", root, fmt.Sprintf("cancel:%d", mine)},
		{fmt.Sprintf("job_id=%d", mine), alice, fmt.Sprintf("cancel:%d", mine)},
		{fmt.Sprintf("job_id=%d", mine), bob, ""},
		{"kind=cancel", bob, ""},
		{"node=n1&kind=drain", root, "drain:<nil>"},
		{"until=1000", root, ""},
		{"since=now-1hours&kind=register,drain&limit=1", root, "drain:<nil>"},
	}
	for _, tt := range tests {
		if a := c.do(t, "GET", "/parity/v1/events?"+tt.query, tt.tok, nil); a.code != http.StatusOK || kinds(a) != tt.want {
			t.Errorf("events?%s: %d %q, want %q", tt.query, a.code, kinds(a), tt.want)
		}
	}
	for _, tt := range []struct{ query, want string }{
		{"job_id=x", `job_id="x"`}, {"limit=0", `limit="0"`}, {"since=yesterday-ish", `since="yesterday-ish"`},
	} {
		if a := c.do(t, "GET", "/parity/v1/events?"+tt.query, root, nil); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), tt.want) {
			t.Errorf("events?%s: %d %s, want 400 naming %s", tt.query, a.code, a.body, tt.want)
		}
	}
}

// writeReport writes a run as parity conform does, at mtime when.
func writeReport(t *testing.T, path string, r *reports.Run, when time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteJSON(f, r); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

func run(id string, started time.Time, specs ...reports.SpecResult) *reports.Run {
	return &reports.Run{ID: id, Target: "lab:nightly.yaml", Started: started, Finished: started.Add(time.Minute), ParityVersion: "test",
		Vendors: []reports.Vendor{{Name: "alpha", Devices: 4, Model: "h100"}, {Name: "beta", Devices: 2}}, Specs: specs}
}

// TestParityConformanceLatest: the newest report of the directory is
// summarised with its matrix (a comparison on its spec's row, a reason
// kept); without a directory the answer says how to configure one; an
// empty directory says there is no report yet.
func TestParityConformanceLatest(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	writeReport(t, filepath.Join(dir, "old", "report.json"), run("old", t0,
		reports.SpecResult{ID: "placement/pack", Area: "placement", Name: "packs", Vendor: "alpha", Status: reports.StatusPassed}), t0)
	writeReport(t, filepath.Join(dir, reports.HistoryFile(t0.Add(24*time.Hour))), run("new", t0.Add(24*time.Hour),
		reports.SpecResult{ID: "placement/pack", Area: "placement", Name: "packs", Vendor: "alpha", Status: reports.StatusPassed},
		reports.SpecResult{ID: "placement/pack", Area: "placement", Name: "packs", Vendor: "beta", Status: reports.StatusFailed, Reason: "spread"},
		reports.SpecResult{ID: "parity/placement/pack", Area: "parity", Name: "packs alike", Status: reports.StatusFailed, Reason: "alpha and beta differ"},
	), t0.Add(24*time.Hour))
	c := startClusterWith(t, func(o *controller.Options) { o.ReportsDir = dir })
	alice := c.token(t, "alice", auth.RoleUser)
	a := c.do(t, "GET", "/parity/v1/conformance/latest", alice, nil)
	rep, _ := a.obj["report"].(map[string]any)
	if a.code != http.StatusOK || rep == nil || rep["id"] != "new" {
		t.Fatalf("latest: %d %s", a.code, a.body)
	}
	sum := rep["summary"].(map[string]any)
	if v := sum["vendor"].(map[string]any); v["passed"] != 1.0 || v["failed"] != 1.0 || sum["parity"].(map[string]any)["failed"] != 1.0 || sum["green"] != false {
		t.Errorf("summary %v", sum)
	}
	m := rep["matrix"].([]any)
	if len(m) != 1 {
		t.Fatalf("matrix %v: want the one spec's row", m)
	}
	row := m[0].(map[string]any)
	res, why := row["results"].(map[string]any), row["reasons"].(map[string]any)
	if row["id"] != "placement/pack" || res["alpha"] != "passed" || res["beta"] != "failed" || row["parity"] != "failed" || why["beta"] != "spread" {
		t.Errorf("row %v", row)
	}

	empty := startClusterWith(t, func(o *controller.Options) { o.ReportsDir = t.TempDir() })
	if a := empty.do(t, "GET", "/parity/v1/conformance/latest", empty.token(t, "alice", auth.RoleUser), nil); a.code != http.StatusNotFound || !strings.Contains(a.errorText(), "no report.json") {
		t.Errorf("empty directory: %d %s", a.code, a.body)
	}
	none := startCluster(t)
	if a := none.do(t, "GET", "/parity/v1/conformance/latest", none.token(t, "alice", auth.RoleUser), nil); a.code != http.StatusNotImplemented || !strings.Contains(a.errorText(), "--reports-dir") {
		t.Errorf("no directory: %d %s", a.code, a.body)
	}
}

// TestParitySchemasReject guards the checks of Parity's answers: the
// served document's schemas refuse an answer with a required property
// missing, one it does not define, or a wrong type.
func TestParitySchemasReject(t *testing.T) {
	c := startCluster(t)
	ct := c.servedContract(t)
	for _, tt := range []struct{ path, body string }{
		{"/parity/v1/explain/1", `{"explanation":{"job_id":1},"errors":[],"warnings":[]}`},
		{"/parity/v1/gpus", `{"gpus":[{"node":"n1","uuid":"u","index":0,"type":"h100","state":"idle","health":"","health_held":false,"health_exempt":false,"colour":"red"}],"errors":[],"warnings":[]}`},
		{"/parity/v1/events", `{"events":[{"seq":"1","time":{},"kind":"x","actor":"a"}],"errors":[],"warnings":[]}`},
		{"/parity/v1/events", `{"errors":[],"warnings":[]}`},
	} {
		req, _ := http.NewRequest("GET", tt.path, nil)
		in := ct.requestInput(t, req, nil)
		if in == nil {
			t.Fatalf("%s is not in the served document", tt.path)
		}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: 200,
			Header: http.Header{"Content-Type": {"application/json"}}}
		out.SetBodyBytes([]byte(tt.body))
		if err := openapi3filter.ValidateResponse(context.Background(), out); err == nil {
			t.Errorf("validator accepted %s for %s", tt.body, tt.path)
		}
	}
}
