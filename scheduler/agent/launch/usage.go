package launch

import (
	"fmt"

	"github.com/parityhpc/parity/gres"
)

// usagePersistEvery throttles how often sampled GPU usage is written to
// the state file (it is always written with any other change).
const usagePersistEvery = 60 // seconds

// gpuAgg accumulates one GPU's samples while a job holds it.
type gpuAgg struct {
	n                int
	sumUtil, maxUtil float64
	sumMem           float64
	maxMem           uint64
}

func newGPUAggs(uuids []string, prior []GPUUsage) map[string]*gpuAgg {
	m := make(map[string]*gpuAgg, len(uuids))
	for _, u := range uuids {
		m[u] = &gpuAgg{}
	}
	for _, p := range prior {
		if a, ok := m[p.UUID]; ok {
			*a = gpuAgg{n: p.Samples, sumUtil: p.MeanUtilPct * float64(p.Samples), maxUtil: p.MaxUtilPct,
				sumMem: p.MeanMemoryBytes * float64(p.Samples), maxMem: p.MaxMemoryBytes}
		}
	}
	return m
}

func (a *gpuAgg) add(s gres.Sample) {
	a.n++
	a.sumUtil += s.UtilizationPct
	a.maxUtil = max(a.maxUtil, s.UtilizationPct)
	a.sumMem += float64(s.MemoryUsedBytes)
	a.maxMem = max(a.maxMem, s.MemoryUsedBytes)
}

// gpuUsage renders the aggregates in the spec's GPU order; mu held.
func (j *job) gpuUsage() []GPUUsage {
	var out []GPUUsage
	for _, u := range j.rec.Spec.GPUs {
		a, ok := j.gpus[u]
		if !ok {
			continue
		}
		g := GPUUsage{UUID: u, Samples: a.n, MaxUtilPct: a.maxUtil, MaxMemoryBytes: a.maxMem}
		if a.n > 0 {
			g.MeanUtilPct = a.sumUtil / float64(a.n)
			g.MeanMemoryBytes = a.sumMem / float64(a.n)
		}
		out = append(out, g)
	}
	return out
}

// ObserveSamples attributes driver samples to the running jobs holding
// each GPU (by UUID); samples of idle GPUs are ignored.
func (r *Runtime) ObserveSamples(samples []gres.Sample) {
	if len(samples) == 0 {
		return
	}
	now := r.cfg.Clock.Now()
	for _, j := range r.snapshot() {
		j.mu.Lock()
		if j.ended || len(j.gpus) == 0 {
			j.mu.Unlock()
			continue
		}
		for _, s := range samples {
			if a, ok := j.gpus[s.UUID]; ok {
				a.add(s)
			}
		}
		if now.Sub(j.lastPersist).Seconds() >= usagePersistEvery {
			if err := j.persist(now); err != nil {
				r.log.Warn("could not record GPU usage", "job", j.rec.Spec.JobID, "err", err)
			}
		}
		j.mu.Unlock()
	}
}

// Holders maps each GPU UUID held by a running job, or by an allocation
// held here for steps (Hold), to the job's id.
func (r *Runtime) Holders() map[string]uint64 {
	out := map[string]uint64{}
	for _, j := range r.snapshot() {
		j.mu.Lock()
		if !j.ended {
			for _, u := range j.rec.Spec.GPUs {
				out[u] = j.rec.Spec.JobID
			}
		}
		j.mu.Unlock()
	}
	return mergeHolders(out, r.heldHolders())
}

// Usage reads a running job's counters now: CPU time and memory from its
// cgroup, GPU aggregates from the samples seen so far.
func (r *Runtime) Usage(jobID uint64) (Usage, error) {
	j, err := r.lookup(jobID)
	if err != nil {
		return Usage{}, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	u := Usage{GPUs: j.gpuUsage()}
	if j.group == nil {
		u.Missing = []string{"cgroup"}
		return u, nil
	}
	st, err := j.group.Stats()
	if err != nil {
		return u, fmt.Errorf("launch: usage of job %d: %w", jobID, err)
	}
	u.CPUTime, u.MemoryPeakBytes, u.OOMKills, u.Missing = st.CPUTime, st.MemoryPeakBytes, st.OOMKills, st.Missing
	return u, nil
}
