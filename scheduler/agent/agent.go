package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/scheduler/agent/nodecheck"
	"github.com/parityhpc/parity/scheduler/agent/telemetry"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/vendors"
)

// Controller is the agent's side of the parity.v1 Agent service;
// *client.Client implements it.
type Controller interface {
	Register(ctx context.Context, r *pb.RegisterRequest) (*pb.RegisterResponse, error)
	Heartbeat(ctx context.Context, r *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error)
	Orders(ctx context.Context, node string) (pb.Agent_OrdersClient, error)
	JobEnded(ctx context.Context, r *pb.JobEndedRequest) error
}

// Config wires an Agent.
type Config struct {
	Node       string
	Controller Controller
	Runtime    *launch.Runtime
	// Drivers are the active drivers and Inventory what they discovered
	// (vendors.DiscoverAll).
	Drivers   []vendors.Driver
	Inventory gres.Inventory
	// Collector, when set, also receives samples and conditions (/metrics).
	Collector *telemetry.Collector
	// SampleInterval is the telemetry period (default 1s); the heartbeat
	// period comes from the controller.
	SampleInterval time.Duration
	// ClockJumps, when set, receives whenever the node's clock jumps
	// ahead (a lab moving its simulated time): the agent then samples at
	// once and heartbeats with those samples, so the controller sees the
	// node at the new time as it would after that time had passed, and
	// a window counted in samples (health recovery) passes in steps of
	// the clock instead of waiting SampleInterval of real time per sample.
	ClockJumps <-chan struct{}
	// LookupUser resolves job owners; default: the node's user database.
	LookupUser func(name string) (Identity, error)
	Version    string
	Logger     *slog.Logger
	// RetryMin and RetryMax bound the reconnect backoff (default 500ms, 30s).
	RetryMin, RetryMax time.Duration
	// NodeChecks run every NodeCheckInterval (default 1 min) and go to
	// the controller with the next heartbeat (none when empty).
	NodeChecks        []nodecheck.Check
	NodeCheckInterval time.Duration
	// DiagnoseTimeout bounds one diagnose order (default 15 min: DCGM
	// level 3 runs take minutes).
	DiagnoseTimeout time.Duration
}

// Agent runs one node.
type Agent struct {
	cfg Config
	log *slog.Logger

	mu sync.Mutex
	// inv is the node's inventory as last registered: Config.Inventory,
	// grown by adapters first seen while the agent runs, replaced by a
	// re-partitioning's discovery (repartition.go).
	inv        gres.Inventory
	samples    map[string]gres.Sample
	conditions []gres.Condition
	interval   time.Duration
	registered bool
	// cluster is the cluster's name, from the controller at registration.
	cluster string
	// Health results waiting for the next heartbeat, and the devices
	// being diagnosed (a repeated order is not run twice at once).
	diagnoses  []*pb.Diagnosis
	checks     []*pb.NodeCheck
	diagnosing map[string]bool
	// wake asks for a heartbeat now: a fatal condition or a result the
	// controller is waiting for should not wait out the interval.
	wake chan struct{}
	// bg tracks diagnoses running in the background.
	bg sync.WaitGroup
	// lanes run orders, one lane per job; ends are reported one
	// goroutine per job, tracked by reporting.
	lanes     jobLanes
	reporting sync.WaitGroup
	// settling holds jobs whose end is being reported and forgotten; a
	// launch of the same job (requeued onto this node) waits for it, or
	// the runtime would take the order for one it already has.
	settling map[uint64]chan struct{}
	// forgot is closed (and replaced) whenever a reported end is
	// forgotten: a launch waiting for an earlier run of its job to go
	// looks again (runs.go).
	forgot chan struct{}
	// steps runs job steps (srun) and tracks allocations held here.
	steps *stepState
}

// maxQueuedConditions bounds conditions kept for the next heartbeat.
const maxQueuedConditions = 256

// New checks the configuration.
func New(cfg Config) (*Agent, error) {
	switch {
	case cfg.Node == "":
		return nil, errors.New("agent: config node is empty")
	case cfg.Controller == nil:
		return nil, errors.New("agent: config controller is nil")
	case cfg.Runtime == nil:
		return nil, errors.New("agent: config runtime is nil")
	}
	if cfg.LookupUser == nil {
		cfg.LookupUser = lookupUser
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = 500 * time.Millisecond
	}
	if cfg.RetryMax < cfg.RetryMin {
		cfg.RetryMax = max(30*time.Second, cfg.RetryMin)
	}
	if cfg.NodeCheckInterval <= 0 {
		cfg.NodeCheckInterval = time.Minute
	}
	if cfg.DiagnoseTimeout <= 0 {
		cfg.DiagnoseTimeout = 15 * time.Minute
	}
	return &Agent{cfg: cfg, log: cfg.Logger.With("node", cfg.Node), inv: cfg.Inventory, samples: map[string]gres.Sample{}, interval: 30 * time.Second,
		diagnosing: map[string]bool{}, wake: make(chan struct{}, 1), settling: map[uint64]chan struct{}{}, forgot: make(chan struct{}),
		steps: newStepState(cfg.Runtime)}, nil
}

// Run re-attaches to the node's jobs, reports ends the controller has not
// seen, registers, and then serves orders, heartbeats, telemetry and job
// ends until ctx ends. Jobs keep running when it returns.
func (a *Agent) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rt := a.cfg.Runtime
	if ids, err := rt.Reattach(ctx); err != nil {
		a.log.Error("re-attach incomplete", "err", err)
	} else if len(ids) > 0 {
		a.log.Info("re-attached to running jobs", "jobs", ids)
	}
	// Ends recorded while no agent ran go first: registering without them
	// would make the controller fail those jobs as lost with the node.
	if ended, err := rt.Ended(); err == nil {
		for _, e := range ended {
			if a.reportEnd(ctx, endRequest(a.cfg.Node, e)) {
				a.forget(e.JobID)
			}
		}
	}
	if err := a.register(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	run := func(f func(context.Context)) {
		wg.Add(1)
		go func() { defer wg.Done(); f(ctx) }()
	}
	defer a.bg.Wait()
	run(a.serveOrders)
	run(a.heartbeats)
	run(a.reportEnds)
	run(a.sample)
	if len(a.cfg.NodeChecks) > 0 {
		run(a.nodeChecks)
	}
	for _, d := range a.cfg.Drivers {
		if g, ok := d.(inventoryGrower); ok {
			run(func(ctx context.Context) { a.followGrowth(ctx, g) })
		}
		if w, ok := d.(vendors.HealthWatcher); ok {
			run(func(ctx context.Context) {
				if err := w.WatchHealth(ctx, a.condition); err != nil && ctx.Err() == nil {
					a.log.Error("health watch ended", "driver", d.Info().Name, "err", err)
				}
			})
		}
	}
	<-ctx.Done()
	wg.Wait()
	return ctx.Err()
}

// register announces the node until the controller accepts it.
func (a *Agent) register(ctx context.Context) error {
	return a.retry(ctx, "register", func() error {
		inv := a.inventory()
		req := &pb.RegisterRequest{Node: a.cfg.Node, Inventory: api.InventoryToProto(inv),
			Running: a.running(), AgentVersion: a.cfg.Version}
		resp, err := a.cfg.Controller.Register(ctx, req)
		if err != nil {
			return err
		}
		a.mu.Lock()
		if iv := resp.GetHeartbeatIntervalSeconds(); iv > 0 {
			a.interval = time.Duration(iv) * time.Second
		}
		a.cluster = resp.GetClusterName()
		a.registered = true
		a.mu.Unlock()
		a.log.Info("registered", "state", resp.GetNodeState(), "devices", len(inv.Devices), "running", len(req.Running))
		for _, o := range resp.GetOrders() {
			a.handle(ctx, o)
		}
		return nil
	})
}

func (a *Agent) running() []*pb.RunningJob {
	var out []*pb.RunningJob
	for _, j := range a.cfg.Runtime.Running() {
		out = append(out, &pb.RunningJob{JobId: j.JobID, Run: j.Run, StartTime: api.Timestamp(j.Started), Pid: int32(j.Pid)})
	}
	return append(out, a.steps.heldJobs(out)...)
}

// serveOrders keeps the order stream open, re-registering when the
// controller lost track of the node.
func (a *Agent) serveOrders(ctx context.Context) {
	defer a.lanes.wait()
	for ctx.Err() == nil {
		err := a.retry(ctx, "open order stream", func() error {
			stream, err := a.cfg.Controller.Orders(ctx, a.cfg.Node)
			if err != nil {
				return err
			}
			for {
				o, err := stream.Recv()
				if err != nil {
					return err
				}
				a.lanes.dispatch(ctx, o, a.handle)
			}
		})
		if err != nil && ctx.Err() == nil {
			a.log.Warn("order stream ended", "err", err)
		}
	}
}

// heartbeats reports liveness, the latest samples, new conditions and the
// running jobs at the controller's interval.
func (a *Agent) heartbeats(ctx context.Context) {
	for {
		a.mu.Lock()
		iv := a.interval
		a.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(iv):
		case <-a.wake:
		}
		req := a.heartbeat()
		resp, err := a.cfg.Controller.Heartbeat(ctx, req)
		if status.Code(err) == codes.FailedPrecondition {
			a.log.Warn("controller asks for registration again", "err", err)
			if err := a.register(ctx); err != nil {
				return
			}
			continue
		}
		if err != nil {
			a.requeueConditions(req.Conditions)
			a.requeueResults(req.Diagnoses, req.NodeChecks)
			a.log.Warn("heartbeat failed", "err", err)
			continue
		}
		for _, o := range resp.GetOrders() {
			a.handle(ctx, o)
		}
	}
}

func (a *Agent) heartbeat() *pb.HeartbeatRequest {
	req := &pb.HeartbeatRequest{Node: a.cfg.Node, Running: a.running()}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, d := range a.inv.Devices {
		if s, ok := a.samples[d.UUID]; ok {
			req.Samples = append(req.Samples, api.SampleToProto(s))
		}
	}
	for _, c := range a.conditions {
		req.Conditions = append(req.Conditions, api.ConditionToProto(c))
	}
	a.conditions = a.conditions[:0]
	req.Diagnoses, req.NodeChecks = a.diagnoses, a.checks
	a.diagnoses, a.checks = nil, nil
	return req
}

func (a *Agent) requeueConditions(cs []*pb.Condition) {
	a.mu.Lock()
	defer a.mu.Unlock()
	back := make([]gres.Condition, 0, len(cs)+len(a.conditions))
	for _, c := range cs {
		back = append(back, api.ConditionFromProto(c))
	}
	a.conditions = append(back, a.conditions...)
	if k := len(a.conditions) - maxQueuedConditions; k > 0 {
		a.conditions = a.conditions[k:]
	}
}

// condition queues a driver's health condition for the next heartbeat;
// a fatal one is sent at once, so the controller drains the device before
// the next job can land on it.
func (a *Agent) condition(c gres.Condition) {
	if a.cfg.Collector != nil {
		a.cfg.Collector.ObserveCondition(c)
	}
	a.mu.Lock()
	a.conditions = append(a.conditions, c)
	if k := len(a.conditions) - maxQueuedConditions; k > 0 {
		a.conditions = a.conditions[k:]
	}
	a.mu.Unlock()
	if c.Severity == gres.SeverityFatal {
		a.heartbeatNow()
	}
}

// sample runs the telemetry loop: samples go to the heartbeat, the
// runtime's usage attribution and /metrics.
func (a *Agent) sample(ctx context.Context) {
	sinks := []telemetry.Sink{a.keepSamples, a.cfg.Runtime.ObserveSamples}
	if a.cfg.Collector != nil {
		sinks = append(sinks, a.cfg.Collector.Observe)
	}
	loop := &telemetry.Loop{Samplers: telemetry.Samplers(a.cfg.Drivers), Sinks: sinks, Interval: a.cfg.SampleInterval,
		Stats: a.cfg.Collector, Logger: a.log}
	if a.cfg.ClockJumps == nil {
		loop.Run(ctx)
		return
	}
	a.sampleOnJumps(ctx, loop)
}

func (a *Agent) keepSamples(samples []gres.Sample) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range samples {
		a.samples[s.UUID] = s
	}
}

// reportEnds hands every job end to the controller, then forgets it.
// Ends are reported concurrently: each waits for a durable commit, and
// the controller's group commit takes them together instead of one by one.
func (a *Agent) reportEnds(ctx context.Context) {
	defer a.reporting.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-a.cfg.Runtime.Events():
			if !ok {
				return
			}
			// Marked before the goroutine starts, so a relaunch of the job
			// ordered meanwhile waits for this end to be settled.
			settled := a.settle(e.JobID)
			a.reporting.Add(1)
			go func() {
				defer a.reporting.Done()
				defer settled()
				a.release(ctx, e.JobID)
				if a.reportEnd(ctx, endRequest(a.cfg.Node, e)) {
					a.forget(e.JobID)
				}
			}()
		}
	}
}

func (a *Agent) forget(id uint64) {
	if err := a.cfg.Runtime.Forget(id); err != nil {
		a.log.Warn("could not drop a reported job's record", "job", id, "err", err)
	}
	a.mu.Lock()
	close(a.forgot)
	a.forgot = make(chan struct{})
	a.mu.Unlock()
}

// reportEnd sends a JobEnded until the controller takes it or ctx ends.
func (a *Agent) reportEnd(ctx context.Context, req *pb.JobEndedRequest) bool {
	err := a.retry(ctx, "report job end", func() error { return a.cfg.Controller.JobEnded(ctx, req) })
	if err == nil {
		a.log.Info("job end reported", "job", req.GetJobId(), "run", req.GetRun(), "state", req.GetState(), "exit", fmt.Sprintf("%d:%d", req.GetExitCode(), req.GetSignal()))
	}
	return err == nil
}

func endRequest(node string, e launch.JobEnd) *pb.JobEndedRequest {
	return &pb.JobEndedRequest{Node: node, JobId: e.JobID, Run: e.Run, ExitCode: int32(e.ExitCode), Signal: int32(e.Signal),
		State: string(e.State), EndTime: api.Timestamp(e.End), Reason: e.Reason, Usage: usageToProto(e.Usage)}
}

// usageToProto is the wire form of what the runtime measured for a job.
func usageToProto(u launch.Usage) *pb.JobUsage {
	p := &pb.JobUsage{CpuTimeMs: u.CPUTime.Milliseconds(), MemoryPeakBytes: u.MemoryPeakBytes, OomKills: u.OOMKills,
		Missing: u.Missing}
	for _, g := range u.GPUs {
		p.Gpus = append(p.Gpus, &pb.GPUUsage{Uuid: g.UUID, Samples: int32(g.Samples), MeanUtilPct: g.MeanUtilPct,
			MaxUtilPct: g.MaxUtilPct, MaxMemoryBytes: g.MaxMemoryBytes, MeanMemoryBytes: g.MeanMemoryBytes})
	}
	return p
}

// retry calls f until it succeeds, ctx ends, or it fails with an error
// retrying cannot fix (the controller rejected the request as such).
func (a *Agent) retry(ctx context.Context, what string, f func() error) error {
	delay := a.cfg.RetryMin
	for {
		err := f()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch status.Code(err) {
		case codes.InvalidArgument, codes.PermissionDenied, codes.Unauthenticated, codes.NotFound:
			a.log.Error(what+" rejected by the controller", "err", err)
			return err
		}
		a.log.Warn(what+" failed; retrying", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, a.cfg.RetryMax)
	}
}
