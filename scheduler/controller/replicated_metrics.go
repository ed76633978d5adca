package controller

import (
	"github.com/prometheus/client_golang/prometheus"
)

// replicaMetrics are the replicated control plane's series: leadership
// changes as they happen, role, term and apply lag at scrape time. Commit
// latency is parity_store_commit_duration_seconds, which with several
// controllers includes the quorum's round trip.
type replicaMetrics struct {
	c        *Controller
	changes  *prometheus.CounterVec
	leader   *prometheus.Desc
	term     *prometheus.Desc
	applyLag *prometheus.Desc
}

func newReplicaMetrics(c *Controller) *replicaMetrics {
	return &replicaMetrics{c: c,
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parity_controller_leadership_changes_total",
			Help: "Times this controller started (to=leader) or stopped (to=follower) serving as the leader."}, []string{"to"}),
		leader: prometheus.NewDesc("parity_controller_leader", "1 while this controller leads and serves, else 0.", nil, nil),
		term:   prometheus.NewDesc("parity_controller_raft_term", "The raft term this controller is in.", nil, nil),
		applyLag: prometheus.NewDesc("parity_controller_apply_lag_entries",
			"Committed entries this controller has not applied to its store yet.", nil, nil),
	}
}

func (m *replicaMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.changes.Describe(ch)
	ch <- m.leader
	ch <- m.term
	ch <- m.applyLag
}

func (m *replicaMetrics) Collect(ch chan<- prometheus.Metric) {
	m.changes.Collect(ch)
	r := m.c.repl
	if r == nil {
		return
	}
	st := r.node.Status()
	var lead float64
	if r.serving.Load() {
		lead = 1
	}
	ch <- prometheus.MustNewConstMetric(m.leader, prometheus.GaugeValue, lead)
	ch <- prometheus.MustNewConstMetric(m.term, prometheus.GaugeValue, float64(st.Term))
	ch <- prometheus.MustNewConstMetric(m.applyLag, prometheus.GaugeValue, float64(st.CommitIndex-min(st.AppliedIndex, st.CommitIndex)))
}

// leadership counts a change of role.
func (m *metrics) leadership(leading bool) {
	to := "follower"
	if leading {
		to = "leader"
	}
	m.replica.changes.WithLabelValues(to).Inc()
}
