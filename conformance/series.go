package conformance

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/vendors"
)

const defaultSampleEvery = time.Second

// nodeSampler is one node's drivers that can sample, with the inventory
// that names their devices.
type nodeSampler struct {
	node     string
	inv      gres.Inventory
	samplers []vendors.Sampler
}

// seriesKey identifies one GPU's series.
type seriesKey struct{ node, uuid string }

// startSampler samples every node's GPUs each tick until the returned
// stop is called, which returns the series in node and GPU order. The
// health of each sample is the controller's view: drained, or healthy
// while the GPU is in service.
func startSampler(ctx context.Context, t Target, nodes []nodeSampler, every time.Duration) func() []reports.GPUSeries {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	series := map[seriesKey]*reports.GPUSeries{}
	var order []seriesKey
	for _, n := range nodes {
		for _, d := range n.inv.Devices {
			if d.Parent != "" {
				continue
			}
			k := seriesKey{n.node, d.UUID}
			series[k] = &reports.GPUSeries{Node: n.node, GPU: strconv.Itoa(d.Index), Vendor: d.Vendor, Model: d.Type}
			order = append(order, k)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			drained := drainedGPUs(ctx, t)
			for _, n := range nodes {
				for _, s := range n.samplers {
					smps, err := s.Sample(ctx)
					if err != nil {
						continue
					}
					mu.Lock()
					for _, smp := range smps {
						if _, simulated := t.(Clock); simulated {
							// The report's timeline is on the host's clock; a lab's
							// drivers stamp its simulated time, which runs ahead.
							smp.Time = time.Now()
						}
						if gs, ok := series[seriesKey{n.node, smp.UUID}]; ok {
							gs.Samples = append(gs.Samples, toGPUSample(smp, drained[smp.UUID]))
						}
					}
					mu.Unlock()
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() []reports.GPUSeries {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		out := make([]reports.GPUSeries, 0, len(order))
		for _, k := range order {
			if gs := series[k]; len(gs.Samples) > 0 {
				out = append(out, *gs)
			}
		}
		return out
	}
}

// drainedGPUs asks the controller which GPUs are drained (by UUID).
func drainedGPUs(ctx context.Context, t Target) map[string]bool {
	out := map[string]bool{}
	cl, err := t.Client(ctx, "admin")
	if err != nil {
		return out
	}
	defer cl.Close()
	nodes, err := cl.ListNodes(ctx, nil)
	if err != nil {
		return out
	}
	for _, n := range nodes {
		for _, g := range n.GetGpus() {
			if g.GetState() == "drain" {
				out[g.GetUuid()] = true
			}
		}
	}
	return out
}

func toGPUSample(s gres.Sample, drained bool) reports.GPUSample {
	out := reports.GPUSample{Time: s.Time, UtilizationPct: s.UtilizationPct, TemperatureC: s.TemperatureC, Health: "healthy"}
	if out.Time.IsZero() {
		out.Time = time.Now()
	}
	if drained {
		out.Health = "drained"
	}
	for _, m := range s.Missing {
		switch {
		case strings.HasPrefix(m, "util"):
			out.Missing = append(out.Missing, reports.FieldUtilization)
		case strings.HasPrefix(m, "temp"):
			out.Missing = append(out.Missing, reports.FieldTemperature)
		}
	}
	return out
}
