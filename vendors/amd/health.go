package amd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
)

// Condition kinds and actions this driver emits.
const (
	KindRAS     = "ras"
	KindLost    = "lost"
	KindThermal = "thermal"
)

// gpuState is one poll of a GPU's health signals.
type gpuState struct {
	present bool
	ras     map[string]rasCount // per block; carried forward when unreadable
	hot     map[string]bool     // sensor label → at or above its crit limit
}

// WatchHealth polls every whole GPU's RAS counters, hwmon temperatures and
// presence on the injected ticker and emits a condition only when a signal
// worsens between two polls — never on the first read, so errors counted
// before the agent started do not drain a GPU again:
//   - new uncorrectable errors in a block: kind "ras", code "<block>-ue",
//     fatal, action "reset";
//   - new correctable errors: code "<block>-ce", warning when at least the
//     CE burst arrived in one poll, info otherwise;
//   - a sensor reaching its temp*_crit: kind "thermal", warning;
//   - the GPU leaving the bus: kind "lost", code "gpu-lost", fatal, "reboot".
//
// Conditions about a partitioned GPU carry the whole GPU's UUID. It returns
// nil when ctx is done.
func (d *Driver) WatchHealth(ctx context.Context, emit func(gres.Condition)) error {
	snap, err := d.current(ctx)
	if err != nil {
		return err
	}
	if d.interval <= 0 {
		return fmt.Errorf("amd: health poll interval %v must be positive", d.interval)
	}
	t := d.newTicker(d.interval)
	defer t.Stop()
	prev := d.pollHealth(snap, nil)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			cur := d.pollHealth(snap, prev)
			for i, g := range snap.gpus {
				for _, c := range d.diffHealth(g, prev[i], cur[i]) {
					emit(c)
				}
			}
			prev = cur
		}
	}
}

func (d *Driver) pollHealth(snap *snapshot, prev []gpuState) []gpuState {
	out := make([]gpuState, len(snap.gpus))
	for i, g := range snap.gpus {
		var before gpuState
		if prev != nil {
			before = prev[i]
		}
		out[i] = d.pollGPU(g, before)
	}
	return out
}

func (d *Driver) pollGPU(g physical, before gpuState) gpuState {
	st := gpuState{hot: map[string]bool{}}
	if _, err := os.Stat(filepath.Join(g.dir, "vendor")); err != nil {
		return st
	}
	st.present = true
	ras, err := readRAS(g.dir)
	if err != nil {
		d.logger.Warn("amd: RAS counters unreadable", "uuid", g.uuid, "err", err)
	}
	st.ras = ras
	if before.present {
		// Keep the last good value of a block that could not be read, so
		// a transient read error cannot turn the next read into a new
		// baseline and hide an increase.
		for block, c := range before.ras {
			if _, ok := st.ras[block]; !ok {
				if st.ras == nil {
					st.ras = map[string]rasCount{}
				}
				st.ras[block] = c
			}
		}
	}
	for _, s := range tempSensors(hwmonDir(g.dir)) {
		if s.critMilliC <= 0 {
			continue
		}
		if mc, ok, err := readInt(s.inputPath); ok && err == nil {
			st.hot[s.label] = mc >= s.critMilliC
		}
	}
	return st
}

func (d *Driver) diffHealth(g physical, prev, cur gpuState) []gres.Condition {
	now := d.now()
	cond := func(kind, code string, sev gres.Severity, action, msg string) gres.Condition {
		return gres.Condition{UUID: g.uuid, Time: now, Kind: kind, Code: code, Severity: sev, Action: action,
			Message: fmt.Sprintf("%s: %s", g.bdf, msg)}
	}
	switch {
	case prev.present && !cur.present:
		return []gres.Condition{cond(KindLost, "gpu-lost", gres.SeverityFatal, healthcheck.RemedyReboot,
			"GPU is no longer on the PCI bus")}
	case !prev.present || !cur.present:
		return nil // absent, or back after an absence: a new baseline
	}
	var out []gres.Condition
	blocks := make([]string, 0, len(cur.ras))
	for b := range cur.ras {
		blocks = append(blocks, b)
	}
	sort.Strings(blocks)
	for _, b := range blocks {
		c, p := cur.ras[b], prev.ras[b]
		if _, had := prev.ras[b]; !had {
			continue
		}
		if c.UE > p.UE {
			out = append(out, cond(KindRAS, b+"-ue", gres.SeverityFatal, healthcheck.RemedyReset,
				fmt.Sprintf("%d new uncorrectable %s errors (total %d)", c.UE-p.UE, b, c.UE)))
		}
		if c.CE > p.CE {
			sev := gres.SeverityInfo
			if c.CE-p.CE >= d.ceBurst {
				sev = gres.SeverityWarning
			}
			out = append(out, cond(KindRAS, b+"-ce", sev, healthcheck.RemedyNone,
				fmt.Sprintf("%d new correctable %s errors in one poll (total %d)", c.CE-p.CE, b, c.CE)))
		}
	}
	labels := make([]string, 0, len(cur.hot))
	for l := range cur.hot {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		if cur.hot[l] && !prev.hot[l] {
			out = append(out, cond(KindThermal, "temp-"+l+"-crit", gres.SeverityWarning, healthcheck.RemedyNone,
				fmt.Sprintf("%s temperature reached its critical limit", l)))
		}
	}
	return out
}
