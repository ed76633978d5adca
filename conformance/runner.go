package conformance

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"sync"
	"time"

	g "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/vendors/contract"
)

// Options tune a run of the suite.
type Options struct {
	// Focus selects specs whose "ID vendor name" matches (nil: all).
	Focus *regexp.Regexp
	// Account charges the suite's jobs ("" = the user's default).
	Account string
	// ExemptAccount is an account the target exempts from idle-GPU
	// reclamation ("" skips the exemption spec, saying so).
	ExemptAccount string
	// JobTimeout bounds the wait for one job to start or end (default 2m).
	JobTimeout time.Duration
	// HealthWait bounds the wait for a health or reclamation verdict after
	// a fault or an idle period (default 40s).
	HealthWait time.Duration
	// ContractTimeout bounds each driver-contract check (default 40s: a
	// polling driver may read its error counters every 30s).
	ContractTimeout time.Duration
	// Contract holds driver-contract results already taken, by vendor
	// (`parity conform driver` certifies an adapter directly, with options
	// a lab replica lacks); those vendors' contract specs report them
	// instead of checking a replica.
	Contract map[string][]contract.Result
	// Progress, when set, hears of every spec starting and ending.
	Progress func(Progress)
	// Now is the clock for the run's times (time.Now when nil).
	Now     func() time.Time
	Version string
	// Logger hears one line per finished spec (default: discarded).
	Logger *slog.Logger

	// TestingT receives the suite's failure (go test passes its *testing.T;
	// nil uses an internal one). SuiteConfig and ReporterConfig configure
	// ginkgo (nil: defaults, succinct).
	TestingT       g.GinkgoTestingT
	SuiteConfig    *types.SuiteConfig
	ReporterConfig *types.ReporterConfig
}

// Progress is one step of a run: a spec starting (Done not yet counting
// it) or ending with its status.
type Progress struct {
	Done, Total int
	Spec        string // spec ID
	Vendor      string // "" for parity specs
	Name        string
	Ended       bool
	Status      reports.Status
}

func (o *Options) defaults() {
	if o.JobTimeout <= 0 {
		o.JobTimeout = 2 * time.Minute
	}
	if o.HealthWait <= 0 {
		o.HealthWait = 40 * time.Second
	}
	if o.ContractTimeout <= 0 {
		o.ContractTimeout = 40 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// fakeT records failure for runs outside go test.
type fakeT struct{ failed bool }

func (f *fakeT) Fail() { f.failed = true }

// Run runs the suite against the target with ginkgo and returns the run's
// results: one result per spec and vendor, parity results across vendors,
// the timeline and the GPU series. ginkgo allows one suite run per process.
func Run(ctx context.Context, t Target, opts Options) (*reports.Run, error) {
	opts.defaults()
	st, err := newRunState(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	defer st.close()
	var stopSeries func() []reports.GPUSeries
	if src, ok := t.(SeriesSource); ok {
		stopSeries = src.StartSeries(ctx)
	}
	st.register()
	if st.total == 0 {
		return nil, fmt.Errorf("conformance: no spec matches the focus %q", opts.Focus)
	}
	suite := types.NewDefaultSuiteConfig()
	if opts.SuiteConfig != nil {
		suite = *opts.SuiteConfig
	}
	rep := types.NewDefaultReporterConfig()
	rep.Succinct = true
	if opts.ReporterConfig != nil {
		rep = *opts.ReporterConfig
	}
	tt := opts.TestingT
	if tt == nil {
		tt = &fakeT{}
	}
	g.RunSpecs(tt, "Parity conformance", suite, rep)
	st.runAtEnd()
	if stopSeries != nil {
		st.series = stopSeries()
	}
	return st.result(ctx), nil
}

// runState is shared by every spec of one run.
type runState struct {
	ctx         context.Context
	t           Target
	opts        Options
	user, admin *client.Client
	started     time.Time
	total, done int
	defs        []specDef // registered, in order
	parityIDs   []string

	mu       sync.Mutex
	records  map[specKey]*specRecord
	results  []reports.SpecResult
	parity   map[string]reports.SpecResult
	timeline []reports.Event
	series   []reports.GPUSeries
	probes   map[string]*probeOnce
	cleanups []func()
	planned  map[specKey]bool
	idle     map[string]*idleJobs
	health   map[string]*healthState
	contract map[string][]contract.Result
	// shared holds fixtures specs share (a vendor's gang allocation, its
	// probe steps), made by the first spec that needs one.
	shared sync.Map
}

type specKey struct {
	ID, Vendor string
}

func newRunState(ctx context.Context, t Target, opts Options) (*runState, error) {
	user, err := t.Client(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("conformance: dial the controller: %w", err)
	}
	admin, err := t.Client(ctx, "admin")
	if err != nil {
		user.Close()
		return nil, fmt.Errorf("conformance: dial the controller as admin: %w", err)
	}
	if _, err := admin.Info(ctx); err != nil {
		user.Close()
		admin.Close()
		return nil, fmt.Errorf("conformance: reach the controller: %s", client.Message(err))
	}
	contracts := map[string][]contract.Result{}
	maps.Copy(contracts, opts.Contract)
	return &runState{ctx: ctx, t: t, opts: opts, user: user, admin: admin, started: opts.Now(),
		records: map[specKey]*specRecord{}, probes: map[string]*probeOnce{}, planned: map[specKey]bool{}, contract: contracts}, nil
}

func (st *runState) close() {
	st.user.Close()
	st.admin.Close()
}

func (st *runState) now() time.Time { return st.opts.Now() }

// atEnd runs f after the last spec (cleanup shared between specs).
func (st *runState) atEnd(f func()) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.cleanups = append(st.cleanups, f)
}

func (st *runState) runAtEnd() {
	st.mu.Lock()
	fs := st.cleanups
	st.cleanups = nil
	st.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

func (st *runState) event(ev reports.Event) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.timeline = append(st.timeline, ev)
}

const keyEntry = "parity-conformance-key"

// register builds the ginkgo tree: one ordered container, areas in report
// order, each vendor's specs, then one parity spec per spec ID. The
// selection is made here, before ginkgo evaluates the containers.
func (st *runState) register() {
	vendors := st.t.Vendors()
	type entry struct {
		d specDef
		v VendorTarget
	}
	plan := map[string]map[string][]entry{} // area → vendor → specs
	for _, d := range allSpecs() {
		for _, v := range vendors {
			if st.opts.Focus != nil && !st.opts.Focus.MatchString(d.ID+" "+v.Name+" "+d.Name) {
				continue
			}
			if plan[d.Area] == nil {
				plan[d.Area] = map[string][]entry{}
			}
			plan[d.Area][v.Name] = append(plan[d.Area][v.Name], entry{d, v})
			st.planned[specKey{d.ID, v.Name}] = true
			st.total++
			st.note(d)
		}
	}
	st.total += len(st.parityIDs)
	g.Describe("Parity conformance", g.Ordered, g.ContinueOnFailure, func() {
		for _, area := range areaOrder {
			if plan[area] == nil {
				continue
			}
			g.Describe(area, func() {
				for _, v := range vendors {
					if len(plan[area][v.Name]) == 0 {
						continue
					}
					g.Describe(v.Name, func() {
						for _, en := range plan[area][v.Name] {
							g.It(en.d.Name, g.SpecTimeout(st.specTimeout()), func(ctx g.SpecContext) { st.runSpec(ctx, en.d, en.v) })
						}
					})
				}
			})
		}
		g.Describe(reports.AreaParity, func() {
			for _, id := range st.parityIDs {
				g.It("parity: "+id, func() { st.runParity(id) })
			}
		})
	})
	g.ReportBeforeEach(func(r types.SpecReport) {
		if k, ok := keyOf(r); ok && st.opts.Progress != nil {
			st.opts.Progress(Progress{Done: st.done, Total: st.total, Spec: k.ID, Vendor: k.Vendor, Name: r.LeafNodeText})
		}
	})
	g.ReportAfterEach(func(r types.SpecReport) { st.finishSpec(r) })
}

// note remembers a registered definition and its parity ID.
func (st *runState) note(d specDef) {
	for _, have := range st.defs {
		if have.ID == d.ID {
			return
		}
	}
	st.defs = append(st.defs, d)
	st.parityIDs = append(st.parityIDs, d.ID)
}

func (st *runState) specTimeout() time.Duration {
	return 3*st.opts.JobTimeout + 4*st.opts.HealthWait
}

func (st *runState) runSpec(ctx g.SpecContext, d specDef, v VendorTarget) {
	key := specKey{ID: d.ID, Vendor: v.Name}
	g.AddReportEntry(keyEntry, key, g.ReportEntryVisibilityNever)
	rec := &specRecord{obs: map[string]string{}}
	st.mu.Lock()
	st.records[key] = rec
	st.mu.Unlock()
	if st.ctx.Err() != nil {
		g.AbortSuite("run interrupted: " + st.ctx.Err().Error())
	}
	if d.GPUs && !v.HasGPUs() {
		g.Skip("no GPUs")
	}
	if d.Isolation {
		if ok, why := st.t.Isolation(); !ok {
			g.Skip("job isolation unavailable on this target: " + why)
		}
	}
	e := &Env{Ctx: ctx, Target: st.t, Vendor: v, User: st.user, Admin: st.admin, run: st, rec: rec,
		Gomega: gomegaFor()}
	defer func() {
		if r := recover(); r != nil {
			// Attach the spec's jobs before ginkgo records the failure.
			ev := e.jobEvidence()
			rec.mu.Lock()
			rec.evidence = append(rec.evidence, ev...)
			rec.mu.Unlock()
			panic(r)
		}
	}()
	d.Run(e)
}

// runParity turns the cross-vendor comparison of one spec into a verdict.
func (st *runState) runParity(id string) {
	g.AddReportEntry(keyEntry, specKey{ID: reports.ParityID(id)}, g.ReportEntryVisibilityNever)
	res := st.parityResult(id)
	switch res.Status {
	case reports.StatusSkipped:
		g.Skip(res.Reason)
	case reports.StatusFailed:
		msg := res.Reason
		for _, ev := range res.Evidence {
			msg += "\n" + ev.Text
		}
		g.Fail(msg)
	}
}

// parityResult compares the vendors' results once every vendor spec ran.
func (st *runState) parityResult(id string) reports.SpecResult {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.parity == nil {
		r := &reports.Run{Vendors: st.vendorList(), Specs: st.results}
		st.parity = map[string]reports.SpecResult{}
		for _, p := range reports.CompareVendors(r, nil) {
			st.parity[p.ID] = p
		}
	}
	return st.parity[reports.ParityID(id)]
}

func keyOf(r types.SpecReport) (specKey, bool) {
	for _, e := range r.ReportEntries {
		if e.Name == keyEntry {
			if k, ok := e.Value.GetRawValue().(specKey); ok {
				return k, true
			}
		}
	}
	return specKey{}, false
}

// vendorList describes the target's vendors for the report.
func (st *runState) vendorList() []reports.Vendor {
	var out []reports.Vendor
	for _, v := range st.t.Vendors() {
		out = append(out, reports.Vendor{Name: v.Name, Driver: v.Info.Name, DriverVersion: v.Info.Version,
			Devices: v.GPUsPerNode * len(v.Nodes), Model: v.GPUType})
	}
	return out
}

// result assembles the run after ginkgo finished.
func (st *runState) result(ctx context.Context) *reports.Run {
	st.mu.Lock()
	defer st.mu.Unlock()
	host, _ := os.Hostname()
	run := &reports.Run{ID: "conform-" + st.started.UTC().Format("20060102T150405Z"), Target: st.t.Name(), Lab: st.t.Lab(),
		Started: st.started, Finished: st.now(), ParityVersion: st.opts.Version, Host: host, Vendors: st.vendorList()}
	run.Specs = append(run.Specs, st.results...)
	run.Timeline = append(controllerTimeline(ctx, st.admin, st.started), st.timeline...)
	run.Series = st.series
	return run
}
