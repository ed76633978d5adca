package replay

import (
	"math"
	"slices"
	"sort"

	"github.com/parityhpc/parity/labs/trace"
)

// Tau is the bounded-slowdown threshold (seconds) the literature uses.
const Tau = 10

// Metrics summarise a replay. Times are seconds.
type Metrics struct {
	// Jobs is how many jobs ran; Killed of them ended before their
	// recorded runtime (see Outcome.Killed).
	Jobs   int `json:"jobs"`
	Killed int `json:"killed"`
	// Utilisation is Σ run × units / (capacity × makespan).
	Utilisation float64 `json:"utilisation"`
	WaitMean    float64 `json:"waitMean"`
	// WaitMedian is the middle wait (the mean of the two middle ones for an
	// even count); WaitP95 is the nearest-rank 95th percentile.
	WaitMedian float64 `json:"waitMedian"`
	WaitP95    float64 `json:"waitP95"`
	// BoundedSlowdown is the mean of max(1, (wait + run) / max(run, Tau)).
	BoundedSlowdown float64 `json:"boundedSlowdown"`
	// Makespan runs from the first submit to the last end (seconds from
	// the trace start).
	Makespan    int64 `json:"makespan"`
	FirstSubmit int64 `json:"firstSubmit"`
	LastEnd     int64 `json:"lastEnd"`
	// GPUFragmentation is set for GPU replays.
	GPUFragmentation *Fragmentation `json:"gpuFragmentation,omitempty"`
	Fairness         Fairness       `json:"fairness"`
	// WaitQuantiles[q] is the q-th percentile wait (q = 0..100), for CDF charts.
	WaitQuantiles []float64 `json:"waitQuantiles,omitempty"`
}

// Fragmentation is how many free GPUs no pending job could use.
type Fragmentation struct {
	// MeanFragmentedGPUs averages them over the makespan.
	MeanFragmentedGPUs float64 `json:"meanFragmentedGPUs"`
	// ShareOfFreeWhileQueued is their share of all free GPU-time while jobs waited.
	ShareOfFreeWhileQueued float64 `json:"shareOfFreeWhileQueued"`
	// QueuedSeconds is how long the queue was not empty.
	QueuedSeconds int64 `json:"queuedSeconds"`
}

// Fairness compares users: Jain's index (1 = all equal, 1/n = one user
// takes all) over per-user mean wait and mean bounded slowdown.
type Fairness struct {
	Users        int     `json:"users"`
	JainWait     float64 `json:"jainWait"`
	JainSlowdown float64 `json:"jainSlowdown"`
	// WorstUser has the largest mean wait.
	WorstUser         string  `json:"worstUser"`
	WorstUserMeanWait float64 `json:"worstUserMeanWait"`
}

// UserStats is one user's (or virtual cluster's) experience.
type UserStats struct {
	User            string  `json:"user"`
	Account         string  `json:"account,omitempty"`
	Jobs            int     `json:"jobs"`
	MeanWait        float64 `json:"meanWait"`
	BoundedSlowdown float64 `json:"boundedSlowdown"`
}

// BoundedSlowdown is max(1, (wait + run) / max(run, Tau)).
func BoundedSlowdown(wait, run int64) float64 {
	return max(1, float64(wait+run)/float64(max(run, Tau)))
}

// computeMetrics summarises the outcomes of the jobs that ran.
func computeMetrics(jobs []trace.Job, out []Outcome, capacity int) (Metrics, []UserStats) {
	var m Metrics
	waits := make([]float64, 0, len(jobs))
	type acc struct {
		account    string
		n          int
		wait, bsld float64
	}
	users := map[string]*acc{}
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	var work, bsldSum float64
	for i := range jobs {
		o := out[i]
		if o.Start < 0 {
			continue
		}
		j := &jobs[i]
		run, wait := o.End-o.Start, o.Start-j.Submit
		m.Jobs++
		if o.Killed {
			m.Killed++
		}
		first, last = min(first, j.Submit), max(last, o.End)
		work += float64(run) * float64(j.Procs)
		b := BoundedSlowdown(wait, run)
		bsldSum += b
		waits = append(waits, float64(wait))
		u := users[j.User]
		if u == nil {
			u = &acc{account: j.Account}
			users[j.User] = u
		}
		u.n++
		u.wait += float64(wait)
		u.bsld += b
	}
	if m.Jobs == 0 {
		return m, nil
	}
	m.Makespan, m.FirstSubmit, m.LastEnd = last-first, first, last
	if m.Makespan > 0 {
		m.Utilisation = work / (float64(capacity) * float64(m.Makespan))
	}
	m.BoundedSlowdown = bsldSum / float64(m.Jobs)
	slices.Sort(waits)
	var sum float64
	for _, w := range waits {
		sum += w
	}
	m.WaitMean = sum / float64(len(waits))
	m.WaitMedian = median(waits)
	m.WaitP95 = nearestRank(waits, 95)
	m.WaitQuantiles = make([]float64, 101)
	for q := range m.WaitQuantiles {
		m.WaitQuantiles[q] = nearestRank(waits, float64(q))
	}
	stats := make([]UserStats, 0, len(users))
	for name, u := range users {
		stats = append(stats, UserStats{User: name, Account: u.account, Jobs: u.n, MeanWait: u.wait / float64(u.n), BoundedSlowdown: u.bsld / float64(u.n)})
	}
	sort.Slice(stats, func(i, j int) bool { return stats[i].User < stats[j].User })
	m.Fairness = fairness(stats)
	return m, stats
}

func fairness(users []UserStats) Fairness {
	f := Fairness{Users: len(users)}
	w := make([]float64, len(users))
	b := make([]float64, len(users))
	for i, u := range users {
		w[i], b[i] = u.MeanWait, u.BoundedSlowdown
		if i == 0 || u.MeanWait > f.WorstUserMeanWait {
			f.WorstUser, f.WorstUserMeanWait = u.User, u.MeanWait
		}
	}
	f.JainWait, f.JainSlowdown = Jain(w), Jain(b)
	return f
}

// Jain is Jain's fairness index (Σx)² / (n Σx²); 1 when all are equal
// (all zero included) or the list is empty.
func Jain(x []float64) float64 {
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	if s2 == 0 {
		return 1
	}
	return s * s / (float64(len(x)) * s2)
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// nearestRank is the p-th percentile by the nearest-rank method (p = 0 is the minimum).
func nearestRank(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	k := int(math.Ceil(p / 100 * float64(n)))
	return sorted[min(max(k-1, 0), n-1)]
}
