package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/replica"
	cstate "github.com/parityhpc/parity/scheduler/state"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// Options configure a controller. Config is required; the other fields
// override it or inject dependencies.
type Options struct {
	Config *config.Cluster
	// LoadConfig re-reads the cluster file for scontrol reconfigure (nil:
	// reconfigure is refused); reconfigure.go.
	LoadConfig func() (*config.Cluster, error)
	// Listen overrides Config.Controller.Listen ("127.0.0.1:0" picks a port).
	Listen string
	// Listener, when set, is served instead of listening on Listen (a
	// socket handed over by a supervisor; tests wrap one to observe it).
	// The controller closes it.
	Listener net.Listener
	// StateDir overrides Config.Controller.StateDir.
	StateDir string
	// MetricsAddr overrides Config.Controller.Metrics; "off" disables.
	MetricsAddr string
	Logger      *slog.Logger
	// Now is the clock (time.Now when nil).
	Now     func() time.Time
	Version string
	// NoScheduler disables the scheduling loop (benchmarks of the submit path).
	NoScheduler bool
	// TLSCert and TLSKey, both set, are PEM files the gRPC listener serves
	// TLS with (clients then need the CA that signed the certificate);
	// both empty serve plain TCP.
	TLSCert, TLSKey string
	// OnJobEnd, when set, receives the record of every job that ended,
	// after its commit, on the goroutine that runs after funcs in commit
	// order (the notifier): it must return quickly.
	OnJobEnd func(*pb.Job)
	// Ledger, when set, receives an accounting line per job run at start
	// and at end (in order, from one goroutine); wrap it in
	// ledger.NewSpooled so a database outage loses nothing. The controller
	// closes it.
	Ledger ledger.Ledger
	// Limits bound the listener: connections, calls in flight, message
	// and body sizes, HTTP timeouts (zero fields: defaults, transport.go).
	Limits TransportLimits
	// Advertise is this controller's entry in Config.Controller.Peers
	// (default: the listen address) when several controllers replicate.
	Advertise string
	// ReplicaTransport replaces the network between controllers (tests:
	// raft's in-memory transport); ReplicaTiming, raft's timeouts.
	ReplicaTransport raft.Transport
	ReplicaTiming    replica.Timing
	// ReplicaTrailingLogs is how many entries a raft snapshot leaves in
	// the log (0: replica's default); tests make it small so that a
	// follower behind is sent a snapshot.
	ReplicaTrailingLogs uint64
	// ReportsDir is where conformance reports are kept (parity conform
	// --out or --history): GET /parity/v1/conformance/latest answers the
	// newest one ("": that path says how to configure it).
	ReportsDir string
}

// Controller is the running daemon.
type Controller struct {
	cfg     *config.Cluster
	coreCfg core.Config
	// partitions holds the partitions, accounts and QOS in force:
	// cluster state (parttable.go, accttable.go).
	partitions *partTable
	opts       Options
	log        *slog.Logger
	now        func() time.Time
	started    time.Time
	key        auth.Key
	authn      *auth.Authenticator

	mu     sync.Mutex
	st     *state
	store  *store
	health *healthState
	// repl is the replicated control plane, nil for a single controller.
	repl *replication

	ops chan *op
	// fence counts the writer's groups, for answers that wait until what
	// they saw is committed (read_fence.go).
	fence      commitFence
	kick       chan struct{}
	stopping   chan struct{}
	writerDone chan struct{}
	metrics    *metrics
	billing    accounting.BillingPolicy
	ledgerCh   chan ledger.JobRecord
	ledgerDone chan struct{}
	// ledgerDrain asks the ledger goroutine to drain a spooling ledger.
	ledgerDrain chan struct{}
	// steps relay job step output from agents to srun (steps_relay.go).
	steps stepRelays
	// passWarnings keeps lasting pass warnings to one log line.
	passWarnings passWarnings

	lis      net.Listener
	mux      *connMux     // splits lis between grpc and api
	api      *http.Server // the HTTP/JSON submit endpoint (httpapi.go)
	grpc     *grpc.Server
	http     *http.Server
	httpLis  net.Listener
	wg       sync.WaitGroup
	stopOnce sync.Once
	cancel   context.CancelFunc
}

// New opens (or creates) the state directory, loads the durable state and
// the cluster key; it does not listen yet.
func New(opts Options) (*Controller, error) {
	if opts.Config == nil {
		return nil, errors.New("controller: Options.Config is required")
	}
	cfg := opts.Config
	coreCfg := cfg.CoreConfig()
	if err := coreCfg.Validate(); err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	c := &Controller{cfg: cfg, coreCfg: coreCfg, opts: opts, log: opts.Logger, now: opts.Now,
		partitions: newPartTable(cfg),
		ops:        make(chan *op, maxBatch), kick: make(chan struct{}, 1), stopping: make(chan struct{}), writerDone: make(chan struct{})}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.started = c.now()
	billing, err := billingPolicy(cfg)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	c.billing = billing
	health, err := newHealthState(c)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	c.health = health
	dir := c.stateDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("controller: state dir: %w", err)
	}
	keyFile := cfg.Auth.KeyFile
	if opts.StateDir != "" {
		keyFile = dir + "/cluster.key"
	}
	key, err := auth.LoadOrCreateKey(keyFile)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	c.key = key
	c.authn = &auth.Authenticator{Key: key, Now: c.now, Elevate: c.roleOf}
	if c.store, err = openStore(dir); err != nil {
		return nil, err
	}
	c.metrics = newMetrics(c)
	c.mu.Lock()
	err = c.reloadLocked()
	if err == nil {
		c.settleLostStepsLocked()
	}
	c.mu.Unlock()
	if err != nil {
		c.store.close()
		return nil, err
	}
	if opts.Ledger != nil {
		c.ledgerCh, c.ledgerDone = make(chan ledger.JobRecord, accountingQueue), make(chan struct{})
		c.ledgerDrain = make(chan struct{}, 1)
		go c.runLedger(opts.Ledger)
		c.mu.Lock()
		c.rerecordLedgerLocked()
		c.mu.Unlock()
	}
	c.log.Info("state loaded", "dir", dir, "jobs", len(c.st.jobs), "active", len(c.st.m.Active()), "nodes", len(c.st.nodes), "next_job_id", c.st.m.NextID())
	return c, nil
}

// rerecordLedgerLocked sends the ledger every job memory holds that ran: a
// crash, or a change of leader, may have come between a commit and its
// ledger line (the ledger upserts, so this is safe).
func (c *Controller) rerecordLedgerLocked() {
	if c.ledgerCh == nil {
		return
	}
	for _, id := range sortedJobIDsOf(c.st.jobs) {
		if j := c.st.jobs[id]; j.State != StatePending {
			c.accountLocked(j)
		}
	}
}

func (c *Controller) stateDir() string {
	if c.opts.StateDir != "" {
		return c.opts.StateDir
	}
	return c.cfg.Controller.StateDir
}

// KeyFile returns where the cluster key is kept.
func (c *Controller) Key() auth.Key { return c.key }

// roleOf is the role the admins and operators in force grant a user
// (cluster.yaml's, as sacctmgr's AdminLevel= changes them at run time).
func (c *Controller) roleOf(user string) auth.Role {
	cfg := c.pcfg()
	switch {
	case cfg.IsAdmin(user):
		return auth.RoleAdmin
	case cfg.IsOperator(user):
		return auth.RoleOperator
	}
	return auth.RoleUser
}

// reloadLocked rebuilds memory from the store (at start, and after a
// failed commit so memory never holds what the disk does not).
func (c *Controller) reloadLocked() error {
	st := newState(cstate.Limits{MaxJobCount: c.cfg.JobLimits.MaxJobCount}, c.cfg.Priority.HalfLife)
	old := c.st
	for _, name := range c.cfg.NodeNames() {
		n := &node{name: name, spec: c.cfg.NodeSpec(name), Node: st.m.AddNode(name), jobs: map[core.JobID]struct{}{}, orders: newOrderQueue()}
		if old != nil {
			if o := old.nodes[name]; o != nil {
				n.orders, n.registered, n.lastHeartbeat, n.samples, n.conditions = o.orders, o.registered, o.lastHeartbeat, o.samples, o.conditions
			}
		}
		n.core = core.Node{Name: name, Features: n.spec.Features}
		st.nodes[name] = n
		st.names = append(st.names, name)
	}
	// A run's fair-share rate is its billing, from its node's inventory:
	// the store loads the nodes before the jobs.
	rate := func(j *job) float64 { return c.billingRate(st.nodes, j, j.Core.Alloc, j.Core.Partition) }
	if err := c.store.load(st, func(name string) *node { return st.nodes[name] }, rate); err != nil {
		return fmt.Errorf("%w: load: %w", ErrStore, err)
	}
	if err := c.loadAccountingLocked(); err != nil {
		return err
	}
	if err := c.loadPartitionsLocked(); err != nil {
		return err
	}
	if err := restoreArrays(st); err != nil {
		return fmt.Errorf("%w: load: %w", ErrStore, err)
	}
	st.indexKeys()
	for _, j := range st.m.Active() {
		for _, a := range j.Core.Alloc {
			if n := st.nodes[a.Node]; n != nil && j.Core.State == core.JobRunning {
				n.jobs[j.Core.ID] = struct{}{}
			}
		}
		if old != nil {
			if o := old.jobs[j.Core.ID]; o != nil {
				j.launchSent = o.launchSent
			}
		}
	}
	c.st = st
	return nil
}

// Start listens and starts serving, the writer and the scheduler.
func (c *Controller) Start(ctx context.Context) error {
	tlsCfg, err := serverTLS(c.opts.TLSCert, c.opts.TLSKey)
	if err != nil {
		return err
	}
	lis, err := c.listen()
	if err != nil {
		return err
	}
	c.lis = lis
	if err := c.startMetrics(); err != nil {
		lis.Close()
		return err
	}
	sopts := append(c.grpcOptions(),
		// A fixed pool of stream workers instead of a goroutine per call keeps
		// stacks warm under thousands of small submissions per second.
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))), grpc.SharedWriteBuffer(true))
	// TLS, when configured, is the mux's: it serves gRPC and the HTTP API.
	c.mux = newConnMux(lis, tlsCfg, orDefault(c.opts.Limits.MaxConns, defaultMaxConns), c.log)
	c.api = c.newHTTPAPIServer()
	c.grpc = grpc.NewServer(sopts...)
	pb.RegisterJobsServer(c.grpc, &jobsService{c: c})
	pb.RegisterNodesServer(c.grpc, &nodesService{c: c})
	pb.RegisterClusterServer(c.grpc, &clusterService{c: c})
	pb.RegisterAgentServer(c.grpc, &agentService{c: c})
	pb.RegisterReservationsServer(c.grpc, &reservationsService{c: c})
	pb.RegisterAccountingServer(c.grpc, &accountingService{c: c})
	pb.RegisterStepsServer(c.grpc, &stepsService{c: c})
	pb.RegisterControllersServer(c.grpc, &controllersService{c: c})
	pb.RegisterAssocAdminServer(c.grpc, &assocAdminService{c: c})
	ctx, c.cancel = context.WithCancel(ctx)
	if err := c.startReplica(ctx, tlsCfg); err != nil {
		c.cancel()
		c.mux.close()
		return err
	}
	c.wg.Add(4)
	go func() { defer c.wg.Done(); c.writer() }()
	go func() { defer c.wg.Done(); c.mux.serve() }()
	if c.serving() {
		// Alone, this controller leads already: its seed is durable when
		// Start returns (startServing's may still wait for the writer).
		if err := c.seedAccounting(ctx); err != nil {
			c.log.Error("the accounting table could not be seeded; the next start tries again", "err", err)
		}
	}
	go func() {
		defer c.wg.Done()
		if err := c.grpc.Serve(c.mux.grpc); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			c.log.Error("grpc serve", "err", err)
		}
	}()
	go func() {
		defer c.wg.Done()
		if err := c.api.Serve(c.mux.http); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.log.Error("http api serve", "err", err)
		}
	}()
	if !c.opts.NoScheduler {
		c.wg.Add(1)
		go func() { defer c.wg.Done(); c.loop(ctx) }()
	}
	c.log.Info("controller listening", "cluster", c.cfg.Name, "addr", lis.Addr().String(), "metrics", c.MetricsAddr())
	return nil
}
