package main

import (
	"context"
	"fmt"
	"os"

	"github.com/parityhpc/parity/gres"
)

// The driver's status strings as its status attribute shows them
// (sysfs-driver-habanalabs; the first letter upper-cased).
const (
	statusOperational = "Operational"
	statusInReset     = "In reset"
	statusDisabled    = "Disabled"
	statusNeedsReset  = "Needs reset"
	statusCreating    = "In device creation"
	statusInRelease   = "In reset after device release"
)

// Condition kinds and codes this adapter names; the core branches on none
// of them, it reads severity and action.
const (
	kindStatus = "status"
	kindReset  = "reset"
	kindLost   = "lost"

	codeNeedsReset = "HL-NEEDS-RESET"
	codeDisabled   = "HL-DISABLED"
	codeStatus     = "HL-STATUS"
	codeHardReset  = "HL-HARD-RESET"
	codeGone       = "HL-GONE"

	// metricHardResets is the per-card gauge a hard-reset condition sets.
	metricHardResets = "habanalabs_hard_reset_count"
)

// cardHealth is one poll of a card's health signals.
type cardHealth struct {
	present    bool
	status     string
	hardResets int64
}

func (d *Driver) pollHealth(inv gres.Inventory, cards map[string]card) []cardHealth {
	out := make([]cardHealth, len(inv.Devices))
	for k, dev := range inv.Devices {
		n := cards[dev.UUID].accel
		if _, err := os.Stat(deviceDir(d.root, n)); err != nil {
			continue
		}
		out[k].present = true
		var err error
		if out[k].status, err = readAttr(d.root, n, "status"); err != nil {
			d.log.Warn("gaudi: status unreadable", "uuid", dev.UUID, "err", err)
		}
		if out[k].hardResets, err = readInt(d.root, n, "hard_reset_cnt"); err != nil {
			d.log.Warn("gaudi: hard_reset_cnt unreadable", "uuid", dev.UUID, "err", err)
		}
	}
	return out
}

// statusCondition says what a card's move into status s means; ok is false
// for statuses that are routine (Gaudi 2 resets its compute engines after
// every release of the device) or transient.
func statusCondition(s string) (code string, sev gres.Severity, action string, ok bool) {
	switch s {
	case statusOperational, statusInRelease, statusInReset, statusCreating, "":
		return "", 0, "", false
	case statusNeedsReset:
		return codeNeedsReset, gres.SeverityFatal, "reset", true
	case statusDisabled:
		return codeDisabled, gres.SeverityFatal, "drain", true
	}
	return codeStatus, gres.SeverityWarning, "drain", true // a status this adapter does not know
}

// WatchHealth polls every card's presence, status and hard-reset count and
// emits a condition when a signal worsens between two polls — never on the
// first read, so what happened before the watcher started is not reported
// again:
//   - status "Needs reset": kind "status", code HL-NEEDS-RESET, fatal,
//     action "reset"; "Disabled": HL-DISABLED, fatal, action "drain"; an
//     unknown status: HL-STATUS, warning, action "drain";
//   - hard_reset_cnt rising (the driver reset the card after a fatal
//     error, killing what ran on it): kind "reset", code HL-HARD-RESET,
//     warning, action "none", setting the habanalabs_hard_reset_count
//     gauge to the new count;
//   - the card's directory vanishing: kind "lost", code HL-GONE, fatal,
//     action "reboot".
//
// It returns nil when ctx is done.
func (d *Driver) WatchHealth(ctx context.Context, emit func(gres.Condition)) error {
	inv, cards, err := d.current(ctx)
	if err != nil {
		return err
	}
	if d.poll <= 0 {
		return fmt.Errorf("gaudi: health poll interval %v must be positive", d.poll)
	}
	t := d.newTicker(d.poll)
	defer t.Stop()
	prev := d.pollHealth(inv, cards)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		cur := d.pollHealth(inv, cards)
		for k, dev := range inv.Devices {
			for _, c := range d.changes(dev, prev[k], cur[k]) {
				emit(c)
			}
		}
		prev = cur
	}
}

// changes are the conditions one card's move from prev to cur raises.
func (d *Driver) changes(dev gres.Device, prev, cur cardHealth) []gres.Condition {
	base := gres.Condition{UUID: dev.UUID, Time: d.now()}
	if prev.present && !cur.present {
		base.Kind, base.Code, base.Severity, base.Action = kindLost, codeGone, gres.SeverityFatal, "reboot"
		base.Message = dev.PCIBusID + " left the bus"
		return []gres.Condition{base}
	}
	if !cur.present {
		return nil
	}
	var out []gres.Condition
	if cur.hardResets > prev.hardResets {
		c := base
		c.Kind, c.Code, c.Severity, c.Action = kindReset, codeHardReset, gres.SeverityWarning, "none"
		c.Message = fmt.Sprintf("%s (module %s): the driver hard-reset the card %d time(s) (total %d)",
			dev.PCIBusID, dev.Attributes["module_id"], cur.hardResets-prev.hardResets, cur.hardResets)
		c.Metric = gres.ConditionMetric{Name: metricHardResets,
			Help: "Hard resets of the Gaudi card since the habanalabs driver loaded.", Value: float64(cur.hardResets)}
		out = append(out, c)
	}
	if cur.status != prev.status {
		if code, sev, action, ok := statusCondition(cur.status); ok {
			c := base
			c.Kind, c.Code, c.Severity, c.Action = kindStatus, code, sev, action
			c.Message = fmt.Sprintf("%s (module %s): status %q, was %q", dev.PCIBusID, dev.Attributes["module_id"], cur.status, prev.status)
			out = append(out, c)
		}
	}
	return out
}
