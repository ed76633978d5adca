package replay

import "github.com/parityhpc/parity/labs/trace"

// recorder keeps the busy units and queue length at every instant they
// change, and resamples them into a bounded series for charts.
type recorder struct {
	max    int
	t      []int64
	busy   []int64
	queued []int32
}

func newRecorder(points int) recorder {
	if points <= 0 {
		points = 500
	}
	return recorder{max: points}
}

func (r *recorder) point(t, busy int64, queued int) {
	if n := len(r.t); n > 0 {
		if r.busy[n-1] == busy && int(r.queued[n-1]) == queued {
			return
		}
		if r.t[n-1] == t {
			r.busy[n-1], r.queued[n-1] = busy, int32(queued)
			return
		}
	}
	r.t = append(r.t, t)
	r.busy = append(r.busy, busy)
	r.queued = append(r.queued, int32(queued))
}

// Series are time-weighted averages over equal buckets of simulated time,
// ready to chart: T[i] is the start of bucket i (seconds from the trace start).
type Series struct {
	BucketSeconds int64     `json:"bucketSeconds"`
	T             []int64   `json:"t"`
	Utilisation   []float64 `json:"utilisation"`
	Queue         []float64 `json:"queue"`
	// Wait[i] is the mean wait (seconds) of the Submitted[i] jobs
	// submitted in bucket i; 0 where none was.
	Wait      []float64 `json:"wait,omitempty"`
	Submitted []int     `json:"submitted,omitempty"`
}

// addWaits fills Wait and Submitted from the jobs that ran (Start >= 0).
func (s *Series) addWaits(jobs []trace.Job, out []Outcome) {
	n := len(s.T)
	if n == 0 || s.BucketSeconds <= 0 {
		return
	}
	s.Wait, s.Submitted = make([]float64, n), make([]int, n)
	for i := range jobs {
		if out[i].Start < 0 {
			continue
		}
		b := int(min(max((jobs[i].Submit-s.T[0])/s.BucketSeconds, 0), int64(n-1)))
		s.Wait[b] += float64(out[i].Start - jobs[i].Submit)
		s.Submitted[b]++
	}
	for b, k := range s.Submitted {
		if k > 0 {
			s.Wait[b] /= float64(k)
		}
	}
}

// series resamples [from, to) into at most r.max buckets.
func (r *recorder) series(from, to int64, capacity int) Series {
	if to <= from || len(r.t) == 0 || capacity <= 0 {
		return Series{}
	}
	width := max((to-from+int64(r.max)-1)/int64(r.max), 1)
	n := int((to - from + width - 1) / width)
	s := Series{BucketSeconds: width, T: make([]int64, n), Utilisation: make([]float64, n), Queue: make([]float64, n)}
	for b := range s.T {
		s.T[b] = from + int64(b)*width
	}
	// Each recorded value holds from r.t[i] to r.t[i+1] (or to).
	for i := range r.t {
		a, z := max(r.t[i], from), to
		if i+1 < len(r.t) {
			z = min(r.t[i+1], to)
		}
		for a < z {
			b := (a - from) / width
			end := min(from+(b+1)*width, z)
			frac := float64(end-a) / float64(width)
			s.Utilisation[b] += frac * float64(r.busy[i]) / float64(capacity)
			s.Queue[b] += frac * float64(r.queued[i])
			a = end
		}
	}
	// The last bucket may be short: scale it to its own width.
	if last := to - s.T[n-1]; last < width {
		f := float64(width) / float64(last)
		s.Utilisation[n-1] *= f
		s.Queue[n-1] *= f
	}
	return s
}

// maxQueue is the largest bucket-average queue length.
func (s Series) maxQueue() float64 {
	m := 0.0
	for _, q := range s.Queue {
		m = max(m, q)
	}
	return m
}
