package rest

import (
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// ParityPrefix is where Parity's own paths live, beside slurmrestd's.
const ParityPrefix = "/parity/"

// ownOp is one of Parity's own operations: its route, and what the
// served document says of it. Its response schema is derived from resp's
// Go type, so the document is the encoder's shape.
type ownOp struct {
	operation
	id, summary, description string
	params                   []map[string]any
	resp                     reflect.Type
}

func param(in, name, desc string, required bool) map[string]any {
	return map[string]any{"in": in, "name": name, "description": desc, "required": required,
		"style": map[string]string{"path": "simple", "query": "form"}[in], "explode": false, "schema": map[string]any{"type": "string"}}
}

// parityOperations are the /parity/v1/ operations. Each authenticates as
// its gRPC twin and calls it in process, so who may see what is the
// service's rule, as over gRPC.
func parityOperations() []ownOp {
	const p = "/parity/v1/"
	timeDesc := " (a UNIX time, or a time sacct reads: 2026-12-01T08:00, now-1hours)"
	return []ownOp{
		{operation: operation{method: "GET", path: p + "explain/{job_id}", skeleton: none, serve: serveExplain, grpc: pb.Jobs_Explain_FullMethodName},
			id: "parity_v1_get_explain", summary: "why a job is pending, when it is expected to start and what would let it start",
			description: "The scheduler's explanation of one job (parity explain): the pending reason with what it is about, the expected start, the facts it checked and suggestions. Another user's job is not found, as over gRPC.",
			params:      []map[string]any{param("path", "job_id", "Job ID", true), param("query", "history", "true: add the job's decision-log entries", false)},
			resp:        reflect.TypeFor[explainResp]()},
		{operation: operation{method: "GET", path: p + "events", skeleton: list("events"), serve: serveEvents, grpc: pb.Cluster_Events_FullMethodName},
			id: "parity_v1_get_events", summary: "query the decision log",
			description: "Decision-log entries (parity events): starts, preemptions, requeues, cancellations, drains, health verdicts and reclamations with the inputs that decided them. Entries about other users' jobs are left out for a user.",
			params: []map[string]any{param("query", "job_id", "only this job's entries", false), param("query", "node", "only entries about this node", false),
				param("query", "gpu", "only entries about this GPU (its UUID)", false), param("query", "kind", "only these kinds (comma-separated)", false),
				param("query", "since", "entries at or after this time"+timeDesc, false), param("query", "until", "entries before this time"+timeDesc, false),
				param("query", "limit", "at most this many, newest first", false)},
			resp: reflect.TypeFor[eventsResp]()},
		{operation: operation{method: "GET", path: p + "gpus", skeleton: list("gpus"), serve: serveGPUs, grpc: pb.Nodes_List_FullMethodName},
			id: "parity_v1_get_gpus", summary: "per-GPU inventory, health, drains, holders and latest telemetry",
			description: "Every GPU the nodes' agents registered: its type and index, state, the health policy's verdict, a drain's reason and author, the job holding it and its latest telemetry sample.",
			params:      []map[string]any{param("query", "node", "only these nodes (a hostlist expression: gpu[01-04])", false)},
			resp:        reflect.TypeFor[gpusResp]()},
		{operation: operation{method: "GET", path: p + "conformance/latest", skeleton: none, serve: serveConformanceLatest, grpc: pb.Cluster_WhoAmI_FullMethodName},
			id: "parity_v1_get_conformance_latest", summary: "the newest conformance report's summary and matrix",
			description: "The newest report.json (parity conform --out or --history) in the directory the controller was started with (--reports-dir): its run, vendors, totals and one row per spec. Without a reports directory it answers 501 saying how to configure one.",
			resp:        reflect.TypeFor[conformanceResp]()},
	}
}

func serveExplain(h *Handler, c *call) (any, error) {
	jid, task, err := jobRef(c.r.PathValue("job_id"))
	if err != nil {
		return nil, err
	}
	if task != nil {
		return nil, status.Errorf(codes.InvalidArgument, "job_id=%q: explain takes a job id, not an array task", c.r.PathValue("job_id"))
	}
	history, err := queryBool(c, "history")
	if err != nil {
		return nil, err
	}
	ex, err := h.b.Jobs.Explain(c.ctx, &pb.ExplainRequest{JobId: jid, History: history})
	if err != nil {
		return nil, err
	}
	out := &explanation{JobID: ex.GetJob().GetId(), JobState: jobState(ex.GetJob()), Reason: ex.GetReason(), Detail: ex.GetDetail(),
		Text: ex.GetText(), ExpectedStart: unset(), Facts: orEmpty(ex.GetFacts()), Suggestions: orEmpty(ex.GetSuggestions()),
		Priority: toPriority(ex.GetPriority())}
	if ex.GetExpectedStart() != nil {
		out.ExpectedStart = epoch(ex.GetExpectedStart())
	}
	for _, ev := range ex.GetHistory() {
		out.History = append(out.History, toEvent(ev))
	}
	return &explainResp{Explanation: out}, nil
}

func serveEvents(h *Handler, c *call) (any, error) {
	q := c.r.URL.Query()
	req := &pb.EventsRequest{Node: q.Get("node"), Gpu: q.Get("gpu")}
	if v := q.Get("job_id"); v != "" {
		jid, task, err := jobRef(v)
		if err != nil || task != nil {
			return nil, status.Errorf(codes.InvalidArgument, "job_id=%q: want a job id (42)", v)
		}
		req.JobId = jid
	}
	for _, k := range strings.Split(q.Get("kind"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			req.Kinds = append(req.Kinds, k)
		}
	}
	var err error
	if req.Since, err = h.queryTime(c, "since"); err != nil {
		return nil, err
	}
	if req.Until, err = h.queryTime(c, "until"); err != nil {
		return nil, err
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n <= 0 {
			return nil, status.Errorf(codes.InvalidArgument, "limit=%q: want a positive integer", v)
		}
		req.Limit = int32(n)
	}
	out := &eventsResp{Events: []decisionEvent{}}
	err = h.b.Cluster.Events(req, &collect[pb.EventsResponse]{ctx: c.ctx, send: func(m *pb.EventsResponse) error {
		for _, ev := range m.GetEvents() {
			out.Events = append(out.Events, toEvent(ev))
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// queryBool reads a true/false parameter (absent: false).
func queryBool(c *call, key string) (bool, error) {
	v := c.r.URL.Query().Get(key)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, status.Errorf(codes.InvalidArgument, "%s=%q: want true or false", key, v)
	}
	return b, nil
}

func toEvent(ev *pb.Event) decisionEvent {
	d := decisionEvent{Seq: ev.GetSeq(), Time: epoch(ev.GetTime()), Kind: ev.GetKind(), JobID: ev.GetJobId(), Node: ev.GetNode(),
		Nodes: ev.GetNodes(), Alternatives: ev.GetAlternatives(), Actor: ev.GetActor(), Reason: ev.GetReason(), Detail: ev.GetDetail(),
		Verdict: ev.GetVerdict(), Priority: toPriority(ev.GetPriority()), Fields: ev.GetFields()}
	if devs := ev.GetFields()["devices"]; devs != "" {
		d.Devices = strings.Split(devs, ",")
	}
	return d
}

func toPriority(p *pb.PriorityFactors) *priorityInfo {
	if p == nil {
		return nil
	}
	tres := p.GetTres()
	if tres == nil {
		tres = map[string]float64{}
	}
	return &priorityInfo{Total: p.GetTotal(), Age: p.GetAge(), Fairshare: p.GetFairshare(), JobSize: p.GetJobsize(),
		Partition: p.GetPartition(), QOS: p.GetQos(), TRES: tres, WeightedAge: p.GetWeightedAge(),
		WeightedFairshare: p.GetWeightedFairshare(), WeightedJobSize: p.GetWeightedJobsize(), WeightedPartition: p.GetWeightedPartition(),
		WeightedQOS: p.GetWeightedQos(), WeightedTRES: p.GetWeightedTres(), Nice: p.GetNice(), Override: p.GetOverride()}
}

func serveGPUs(h *Handler, c *call) (any, error) {
	req := &pb.ListNodesRequest{Samples: true}
	if v := c.r.URL.Query().Get("node"); v != "" {
		req.Names = []string{v}
	}
	nodes, err := h.listNodes(c, req)
	if err != nil {
		return nil, err
	}
	out := &gpusResp{GPUs: []gpuInfo{}}
	for _, n := range nodes {
		last := map[string]*pb.Sample{}
		for _, s := range n.GetSamples() {
			last[s.GetUuid()] = s
		}
		for _, g := range n.GetGpus() {
			out.GPUs = append(out.GPUs, gpuInfo{Node: n.GetName(), UUID: g.GetUuid(), Index: g.GetIndex(), Type: g.GetType(),
				Parent: g.GetParent(), State: g.GetState(), Health: g.GetHealth(), HealthReason: g.GetHealthReason(),
				HealthHeld: g.GetHealthHeld(), HealthExempt: g.GetHealthExempt(), DrainReason: g.GetDrainReason(),
				DrainedBy: g.GetDrainedBy(), JobID: g.GetJobId(), LastSample: toSample(last[g.GetUuid()])})
		}
	}
	return out, nil
}

func toSample(s *pb.Sample) *gpuSample {
	if s == nil {
		return nil
	}
	return &gpuSample{Time: epoch(s.GetTime()), UtilizationPct: s.GetUtilizationPct(), MemoryUsedBytes: s.GetMemoryUsedBytes(),
		MemoryTotalBytes: s.GetMemoryTotalBytes(), TemperatureC: s.GetTemperatureC(), PowerW: s.GetPowerW(),
		CorrectedErrors: s.GetCorrectedErrors(), UncorrectedErrors: s.GetUncorrectedErrors(), Missing: s.GetMissing()}
}
