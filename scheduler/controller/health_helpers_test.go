package controller

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// healthCluster is testCluster with a quick health policy (two clean
// samples to recover, one automatic resume before a device is held) and
// reclamation acting for real on a short ladder.
const healthCluster = testCluster + `
health:
  recoveryPasses: 2
  flapLimit: 1
reclamation:
  dryRun: false
  idleFor: 4m
  grace: 2m
  minRuntime: 0s
  maxSampleGap: 2m
  exemptAccounts: [bio]
`

// The same fault class as each vendor's driver reports it: a GPU-scoped
// fatal fault that needs the GPU out of service.
var vendorFaults = []struct {
	vendor string
	cond   gres.Condition
}{
	{"nvidia", gres.Condition{Kind: "xid", Code: "79", Severity: gres.SeverityFatal, Action: "reboot", Message: "XID 79: GPU has fallen off the bus"}},
	{"amd", gres.Condition{Kind: "ras", Code: "umc-ue", Severity: gres.SeverityFatal, Action: "reset", Message: "0000:0c:00.0: 1 new uncorrectable umc errors (total 1)"}},
}

// beat is one heartbeat's health payload.
type beat struct {
	util   map[string]float64 // uuid → utilisation; every GPU of the node is sampled
	conds  []gres.Condition
	diags  []gres.Diagnosis
	checks []*pb.NodeCheck
}

// heartbeat sends a heartbeat for node (gpus devices) at the fake clock's time.
func (h *harness) heartbeat(node string, gpus int, b beat) *pb.HeartbeatResponse {
	h.t.Helper()
	now := h.clock.Now()
	req := &pb.HeartbeatRequest{Node: node, NodeChecks: b.checks}
	for i := range gpus {
		u := fmt.Sprintf("GPU-%s-%d", node, i)
		req.Samples = append(req.Samples, api.SampleToProto(gres.Sample{UUID: u, Time: now, UtilizationPct: b.util[u], TemperatureC: 45, PowerW: 80}))
	}
	for _, c := range b.conds {
		if c.Time.IsZero() {
			c.Time = now
		}
		req.Conditions = append(req.Conditions, api.ConditionToProto(c))
	}
	for _, d := range b.diags {
		req.Diagnoses = append(req.Diagnoses, api.DiagnosisToProto(d, now))
	}
	h.c.mu.Lock()
	for id := range h.c.st.nodes[node].jobs {
		req.Running = append(req.Running, &pb.RunningJob{JobId: uint64(id)})
	}
	h.c.mu.Unlock()
	resp, err := h.agent(node).Heartbeat(context.Background(), req)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

// cleanBeats advances the clock by step and sends n clean heartbeats.
func (h *harness) cleanBeats(node string, gpus, n int, step time.Duration) {
	h.t.Helper()
	for range n {
		h.clock.Advance(step)
		h.heartbeat(node, gpus, beat{})
	}
}

func (h *harness) node(name string) *pb.Node {
	h.t.Helper()
	n, err := h.as("root", auth.RoleAdmin).GetNode(context.Background(), name)
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

func (h *harness) gpu(node, uuid string) *pb.GPU {
	h.t.Helper()
	for _, g := range h.node(node).GetGpus() {
		if g.GetUuid() == uuid {
			return g
		}
	}
	h.t.Fatalf("node %s has no GPU %s", node, uuid)
	return nil
}

// eventsOf lists decision log entries of the given kinds, oldest first.
func (h *harness) eventsOf(kinds ...string) []*pb.Event {
	h.t.Helper()
	evs, err := h.as("root", auth.RoleAdmin).Events(context.Background(), &pb.EventsRequest{Kinds: kinds})
	if err != nil {
		h.t.Fatal(err)
	}
	return evs
}

// maintain runs one maintenance round (health clock, reclamation).
func (h *harness) maintain() {
	h.t.Helper()
	if err := h.c.maintain(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// runningOn submits a one-GPU job as user, schedules it and returns its
// id and GPU.
func (h *harness) runningOn(user, name string) (uint64, string) {
	h.t.Helper()
	id := h.submit(h.as(user, auth.RoleUser), gpuJob(name, 1))
	h.pass()
	j := h.job(id)
	if j.GetState() != StateRunning || len(j.GetAlloc()) != 1 || len(j.GetAlloc()[0].GetDevices()) != 1 {
		h.t.Fatalf("job %s did not start on one GPU: %v", name, j)
	}
	return id, j.GetAlloc()[0].GetDevices()[0]
}

// expectOrder reads orders until one of kind for job (or device) arrives.
func expectOrder(t *testing.T, stream pb.Agent_OrdersClient, kind string, job uint64, device string) *pb.Order {
	t.Helper()
	for range 8 {
		o := recvOrder(t, stream)
		if o.GetKind() == kind && (job == 0 || o.GetJobId() == job) && (device == "" || o.GetDevice() == device) {
			return o
		}
	}
	t.Fatalf("no %s order for job %d device %q", kind, job, device)
	return nil
}

// expectMetrics scrapes /metrics and checks that each line is there.
func (h *harness) expectMetrics(lines ...string) {
	h.t.Helper()
	resp, err := http.Get("http://" + h.c.MetricsAddr() + "/metrics")
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range lines {
		if !strings.Contains(string(body), want) {
			h.t.Errorf("metrics lack %q", want)
		}
	}
}
