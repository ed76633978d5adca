package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
	"github.com/parityhpc/parity/vendors"
)

// ConditionKindAdapter is the kind of the conditions an Adapter emits
// about its adapter (gone, hung, malformed inventory, devices removed or
// changed); the code says which.
const ConditionKindAdapter = "adapter"

// Codes of ConditionKindAdapter conditions.
const (
	AdapterGone      = "gone"      // the socket closed or a call failed
	AdapterHung      = "hung"      // a call outlived the call timeout
	AdapterMalformed = "malformed" // an inventory the node cannot hold
	AdapterRemoved   = "removed"   // a registered device left its inventory
	AdapterChanged   = "changed"   // a registered device changed in its inventory
)

// WatchHealth supervises the adapter until ctx ends: it probes the
// adapter's inventory every ProbeInterval, and at once after a failed call
// or when the adapter's own health stream ends; forwards the adapter's
// conditions about its registered devices; drains the registered devices
// when the adapter goes; and reconnects with backoff between
// ReconnectMin and ReconnectMax on the adapter's clock.
func (a *Adapter) WatchHealth(ctx context.Context, emit func(gres.Condition)) error {
	a.drainAbsent(emit)
	delay := a.cfg.Policy.ReconnectMin
	for ctx.Err() == nil {
		a.mu.Lock()
		conn := a.conn
		a.mu.Unlock()
		if conn != nil {
			code, why := a.whileUp(ctx, conn, emit)
			if ctx.Err() != nil {
				return nil
			}
			a.goDown(code, why, emit)
			delay = a.cfg.Policy.ReconnectMin
			continue
		}
		if !a.sleep(ctx, delay) {
			return nil
		}
		conn, inv, err := a.connect(ctx)
		if err != nil {
			delay = min(2*delay, a.cfg.Policy.ReconnectMax)
			a.log.Warn("adapter still unavailable", "err", err, "retry in", delay)
			a.mu.Lock()
			a.reason = err.Error()
			a.mu.Unlock()
			continue
		}
		a.comeUp(conn, inv, emit)
	}
	return nil
}

// whileUp probes the connected adapter until a probe fails, and returns
// the condition code and why.
func (a *Adapter) whileUp(ctx context.Context, conn vendors.Driver, emit func(gres.Condition)) (string, string) {
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	streamEnded := a.forwardHealth(watchCtx, conn, emit)
	for {
		tick, stop := a.after(a.cfg.Policy.ProbeInterval)
		select {
		case <-ctx.Done():
			stop()
			return "", ""
		case <-tick:
		case <-a.kick:
		case <-streamEnded:
			streamEnded = nil // probed once; the stream is not restarted until a reconnect
		}
		stop()
		inv, err := a.discover(ctx, conn)
		if ctx.Err() != nil {
			return "", ""
		}
		if err != nil {
			return failureCode(err), err.Error()
		}
		a.reconcile(inv, emit)
	}
}

// failureCode classifies why the adapter is taken as gone.
func failureCode(err error) string {
	switch {
	case errors.Is(err, errHung):
		return AdapterHung
	case errors.Is(err, vendors.ErrMalformedInventory) || strings.Contains(err.Error(), "malformed inventory"):
		return AdapterMalformed
	}
	return AdapterGone
}

// forwardHealth runs the adapter's own health watch, passing on what it
// says about registered devices; the returned channel closes when the
// watch ends on the adapter's side (nil when it has none).
func (a *Adapter) forwardHealth(ctx context.Context, conn vendors.Driver, emit func(gres.Condition)) <-chan struct{} {
	w, ok := conn.(vendors.HealthWatcher)
	if !ok {
		return nil
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		err := w.WatchHealth(ctx, func(c gres.Condition) {
			a.mu.Lock()
			_, mine := a.registered[c.UUID]
			a.mu.Unlock()
			if mine {
				if a.cfg.Stamp {
					c.Time = a.cfg.Clock.Now()
				}
				emit(c)
			}
		})
		if ctx.Err() == nil {
			a.log.Warn("adapter's health stream ended", "err", err)
		}
	}()
	return ended
}

// goDown drains the registered devices with why and drops the connection;
// the loss is counted, and the conditions say so from the second within
// FlapWindow, and that the adapter is flapping from the FlapRestarts-th.
func (a *Adapter) goDown(code, why string, emit func(gres.Condition)) {
	now := a.cfg.Clock.Now()
	a.mu.Lock()
	conn := a.conn
	a.conn, a.reason, a.downSince = nil, why, now
	uuids := append([]string(nil), a.order...)
	a.missing = map[string]string{}
	n, flapping := a.lossLocked(now)
	a.mu.Unlock()
	if conn != nil {
		closeDriver(conn)
	}
	code, msg := a.lossMessage(code, why, n, flapping)
	a.log.Error("adapter unavailable: draining its devices; the node's other devices are not touched",
		"code", code, "why", why, "devices", len(uuids), "losses", n, "within", a.cfg.Policy.FlapWindow)
	for _, u := range uuids {
		emit(a.drainCondition(u, code, msg, now))
	}
}

// comeUp takes a new connection and checks its inventory against the
// registered devices.
func (a *Adapter) comeUp(conn vendors.Driver, inv gres.Inventory, emit func(gres.Condition)) {
	a.mu.Lock()
	a.conn, a.reason = conn, ""
	if a.info.Name == "" {
		a.info = conn.Info()
	}
	gone := a.cfg.Clock.Now().Sub(a.downSince)
	releases := a.releases
	a.releases = nil
	a.mu.Unlock()
	a.log.Info("adapter back: its devices return once the health policy has clean samples and a passing diagnosis",
		"after", gone.Round(time.Millisecond))
	for _, id := range releases {
		if err := a.Release(context.Background(), id); err != nil {
			a.log.Warn("a release kept while the adapter was down failed", "id", id, "err", err)
		}
	}
	if a.adopt(inv) {
		return
	}
	a.reconcile(inv, emit)
}

// reconcile compares a live inventory with the registered devices:
// a device that left or changed is drained, one that is back as
// registered is usable again, and one never registered is reported once.
func (a *Adapter) reconcile(inv gres.Inventory, emit func(gres.Condition)) {
	now := a.cfg.Clock.Now()
	live := make(map[string]gres.Device, len(inv.Devices))
	for _, d := range inv.Devices {
		live[d.UUID] = d
	}
	var out []gres.Condition
	a.mu.Lock()
	for _, u := range a.order {
		d, ok := live[u]
		code, why := "", ""
		switch {
		case !ok:
			code, why = AdapterRemoved, "left the adapter's inventory"
		default:
			if diff := deviceChange(a.registered[u], d); diff != "" {
				code, why = AdapterChanged, "changed in the adapter's inventory: "+diff
			}
		}
		prev, was := a.missing[u]
		switch {
		case why != "" && prev != why:
			a.missing[u] = why
			out = append(out, a.drainCondition(u, code, fmt.Sprintf("device %s %s (adapter %s)", u, why, a.cfg.Policy.Target), now))
		case why == "" && was:
			delete(a.missing, u)
			a.log.Info("device back in the adapter's inventory as registered", "device", u)
		}
	}
	for _, d := range inv.Devices {
		if _, ok := a.registered[d.UUID]; !ok && !a.unknownNew[d.UUID] {
			a.unknownNew[d.UUID] = true
			a.log.Warn("the adapter reports a device this node did not register; it is used after the agent's next start", "device", d.UUID)
		}
	}
	a.mu.Unlock()
	for _, c := range out {
		a.log.Error("adapter device drained", "device", c.UUID, "why", c.Message)
		emit(c)
	}
}

func (a *Adapter) drainCondition(uuid, code, msg string, now time.Time) gres.Condition {
	return gres.Condition{UUID: uuid, Time: now, Kind: ConditionKindAdapter, Code: code, Severity: gres.SeverityFatal,
		Message: msg, Action: healthcheck.RemedyDrain}
}

// deviceChange names what placement relies on that differs between the
// registered device and its live description ("" when nothing does).
func deviceChange(was, now gres.Device) string {
	var diffs []string
	add := func(field string, a, b any) {
		if a != b {
			diffs = append(diffs, fmt.Sprintf("%s %v -> %v", field, a, b))
		}
	}
	add("type", was.Type, now.Type)
	add("index", was.Index, now.Index)
	add("numaNode", was.NUMANode, now.NUMANode)
	add("memoryBytes", was.MemoryBytes, now.MemoryBytes)
	add("parent", was.Parent, now.Parent)
	add("pciBusId", was.PCIBusID, now.PCIBusID)
	if !was.LocalCPUs.Equal(now.LocalCPUs) {
		diffs = append(diffs, fmt.Sprintf("localCpus %s -> %s", was.LocalCPUs, now.LocalCPUs))
	}
	return strings.Join(diffs, ", ")
}

// after returns a channel closed once d has passed on the adapter's clock.
func (a *Adapter) after(d time.Duration) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	t := a.cfg.Clock.AfterFunc(d, func() { close(ch) })
	return ch, func() { t.Stop() }
}

// sleep waits d on the adapter's clock; false when ctx ended first.
func (a *Adapter) sleep(ctx context.Context, d time.Duration) bool {
	ch, stop := a.after(d)
	defer stop()
	select {
	case <-ctx.Done():
		return false
	case <-ch:
		return true
	}
}
