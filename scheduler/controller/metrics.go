package controller

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/parityhpc/parity/scheduler/httplimit"
)

// metrics are the controller's Prometheus series, in a registry of its
// own (no global state). Queue depth and node/GPU counts are gathered at
// scrape time from the state; counters and histograms as things happen.
type metrics struct {
	c         *Controller
	reg       *prometheus.Registry
	submitted prometheus.Counter
	started   prometheus.Counter
	completed *prometheus.CounterVec
	passDur   prometheus.Histogram
	commitDur prometheus.Histogram
	batch     prometheus.Histogram

	healthDecisions *prometheus.CounterVec
	healthJobs      *prometheus.CounterVec
	healthHeld      prometheus.Counter
	drainCapped     prometheus.Counter
	reclaims        *prometheus.CounterVec
	reclaimedHours  *prometheus.CounterVec

	jobsDesc  *prometheus.Desc
	nodesDesc *prometheus.Desc
	gpusDesc  *prometheus.Desc

	replica *replicaMetrics
}

func newMetrics(c *Controller) *metrics {
	m := &metrics{c: c, reg: prometheus.NewRegistry(),
		submitted: prometheus.NewCounter(prometheus.CounterOpts{Name: "parity_jobs_submitted_total", Help: "Jobs accepted (durably committed)."}),
		started:   prometheus.NewCounter(prometheus.CounterOpts{Name: "parity_jobs_started_total", Help: "Jobs started by the scheduler."}),
		completed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parity_jobs_completed_total", Help: "Jobs that ended, by final state."}, []string{"state"}),
		passDur: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "parity_schedule_pass_duration_seconds", Help: "Duration of scheduling passes (core.Schedule).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		commitDur: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "parity_store_commit_duration_seconds", Help: "Duration of group commits (including fsync).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "parity_store_commit_ops", Help: "Mutations per group commit.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 8)}),
		healthDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parity_health_decisions_total",
			Help: "Health policy decisions, by action (none records a verdict change)."}, []string{"action"}),
		healthJobs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parity_health_jobs_total",
			Help: "Jobs stopped because a GPU or node they ran on failed, by outcome (requeue, node_fail)."}, []string{"outcome"}),
		healthHeld: prometheus.NewCounter(prometheus.CounterOpts{Name: "parity_health_held_total",
			Help: "Devices held drained for flapping until an admin resumes them."}),
		drainCapped: prometheus.NewCounter(prometheus.CounterOpts{Name: "parity_health_drains_capped_total",
			Help: "Automatic drains not applied because the cluster-wide drain cap was reached."}),
		reclaims: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parity_reclaim_decisions_total",
			Help: "Idle-GPU reclamation decisions, by action (warn, clear, reclaim) and whether they were dry-run."}, []string{"action", "dry_run"}),
		reclaimedHours: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parity_reclaimed_gpu_hours_total",
			Help: "GPU-hours jobs held idle before they were reclaimed, by account."}, []string{"account"}),
		jobsDesc:  prometheus.NewDesc("parity_jobs", "Jobs in memory by state and reason (queue depth).", []string{"state", "reason"}, nil),
		nodesDesc: prometheus.NewDesc("parity_nodes", "Nodes by state.", []string{"state"}, nil),
		gpusDesc:  prometheus.NewDesc("parity_gpus", "GPUs by state (idle, alloc, drain) on registered nodes.", []string{"state"}, nil),
	}
	m.replica = newReplicaMetrics(c)
	m.reg.MustRegister(m.submitted, m.started, m.completed, m.passDur, m.commitDur, m.batch, m,
		m.healthDecisions, m.healthJobs, m.healthHeld, m.drainCapped, m.reclaims, m.reclaimedHours, m.replica)
	return m
}

func (m *metrics) pass(d time.Duration, _ int) { m.passDur.Observe(d.Seconds()) }

func (m *metrics) commit(ops int, d time.Duration) {
	m.batch.Observe(float64(ops))
	m.commitDur.Observe(d.Seconds())
}

func (m *metrics) ended(state string) { m.completed.WithLabelValues(state).Inc() }

func (m *metrics) healthDecision(action string) { m.healthDecisions.WithLabelValues(action).Inc() }

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.jobsDesc
	ch <- m.nodesDesc
	ch <- m.gpusDesc
}

// Collect implements prometheus.Collector from the live state.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	c := m.c
	type key struct{ state, reason string }
	jobs := map[key]int{}
	nodes := map[string]int{}
	gpus := map[string]int{}
	c.mu.Lock()
	for _, j := range c.st.jobs {
		r := ""
		if j.State == StatePending {
			r = j.Reason
		}
		jobs[key{j.State, r}]++
	}
	partsOf := c.partitionsByNode()
	for _, name := range c.st.names {
		p := c.nodeProtoIn(c.st.nodes[name], partsOf[name])
		nodes[p.GetDisplayState()]++
		if p.GetRegistered() {
			for _, g := range p.GetGpus() {
				gpus[g.GetState()]++
			}
		}
	}
	c.mu.Unlock()
	for k, v := range jobs {
		ch <- prometheus.MustNewConstMetric(m.jobsDesc, prometheus.GaugeValue, float64(v), k.state, k.reason)
	}
	for k, v := range nodes {
		ch <- prometheus.MustNewConstMetric(m.nodesDesc, prometheus.GaugeValue, float64(v), k)
	}
	for k, v := range gpus {
		ch <- prometheus.MustNewConstMetric(m.gpusDesc, prometheus.GaugeValue, float64(v), k)
	}
}

// startMetrics serves /metrics on its own listener when configured.
func (c *Controller) startMetrics() error {
	addr := c.opts.MetricsAddr
	if addr == "" {
		addr = c.cfg.Controller.Metrics
	}
	if addr == "" || addr == "off" {
		return nil
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("controller: metrics listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(c.metrics.reg, promhttp.HandlerOpts{}))
	c.httpLis = lis
	c.http = httplimit.Server(mux, c.opts.Limits.HTTP, httplimit.Metrics(), nil, c.log)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := c.http.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.log.Error("metrics serve", "err", err)
		}
	}()
	return nil
}
