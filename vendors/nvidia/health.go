package nvidia

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
)

// WatchHealth registers every whole GPU for the health events it supports
// (XIDs, double-bit ECC, retirement and poison events, GPU unavailable —
// always intersected with GetSupportedEventTypes, as registering an
// unsupported type fails) on one NVML event set and turns each event into
// a gres.Condition for emit, attributed to the MIG device when the event
// names an instance. The blocking NVML wait runs on its own goroutine with
// a short timeout (WithEventWait), so cancelling ctx or closing the driver
// stops the watch within one timeout. When the DCGM given with WithDCGM
// is a DCGMHealthWatcher, its health watches run beside the events and
// feed the same emit; without one the watch logs that and goes on with
// NVML alone. WatchHealth returns nil once ctx is done (after the DCGM
// watch has returned) and never calls emit after returning.
func (d *Driver) WatchHealth(ctx context.Context, emit func(gres.Condition)) error {
	if emit == nil {
		return errors.New("nvidia: watch health: emit is nil")
	}
	done, err := d.begin()
	if err != nil {
		return err
	}
	defer done()
	s, err := d.current(ctx)
	if err != nil {
		return err
	}
	wctx, unregister, err := d.registerWatcher(ctx)
	if err != nil {
		return err
	}
	started := false
	defer func() {
		unregister()
		if !started {
			d.watchers.Done()
		}
	}()
	set, ret := call(d, "EventSetCreate", d.lib.EventSetCreate)
	if ret != nvml.SUCCESS || set == nil {
		return fmt.Errorf("nvidia: create event set: %w", ret)
	}
	if n := d.registerEvents(s, set); n == 0 {
		// Nothing to wait for: free the set now, on this goroutine.
		call(d, "EventSet.Free", func() (nvml.Return, nvml.Return) { return set.Free(), nvml.SUCCESS })
		return fmt.Errorf("nvidia: no GPU accepted health event registration: %w", nvml.ERROR_NOT_SUPPORTED)
	}
	// The wait blocks in C for up to one timeout; running it on its own
	// goroutine lets WatchHealth return as soon as ctx is done. The gate
	// guarantees emit is never called after that; Close waits for the
	// goroutine (d.watchers) before shutting NVML down.
	var gate sync.Mutex
	stopped := false
	gated := func(c gres.Condition) {
		gate.Lock()
		defer gate.Unlock()
		if !stopped {
			emit(c)
		}
	}
	finished := make(chan struct{})
	started = true
	go func() {
		defer d.watchers.Done()
		defer close(finished)
		defer call(d, "EventSet.Free", func() (nvml.Return, nvml.Return) { return set.Free(), nvml.SUCCESS })
		d.pump(wctx, set, s, gated)
	}()
	dcgmDone := d.watchDCGM(wctx, s, gated)
	select {
	case <-wctx.Done():
	case <-finished:
	}
	gate.Lock()
	stopped = true
	gate.Unlock()
	<-dcgmDone
	return nil
}

// watchDCGM runs DCGM's health watches beside the NVML events when the
// DCGM given with WithDCGM has them; without DCGM (libdcgm absent, no host
// engine) it says so and skips, never failing the NVML watch. The channel
// closes once the DCGM watch has returned (at once when skipped).
func (d *Driver) watchDCGM(ctx context.Context, s *snapshot, emit func(gres.Condition)) <-chan struct{} {
	done := make(chan struct{})
	hw, ok := d.opts.dcgm.(DCGMHealthWatcher)
	if !ok {
		// Said at Info only where a DCGM was configured but lacks the
		// watches; a driver built without one (labs, tests) says it at Debug.
		level := slog.LevelDebug
		if d.opts.dcgm != nil {
			level = slog.LevelInfo
		}
		d.log.Log(ctx, level, "DCGM health watches skipped: DCGM is not available (libdcgm absent or not configured); NVML events still watched")
		close(done)
		return done
	}
	var uuids []string
	for _, dev := range s.inv.Devices {
		if dev.Parent == "" {
			uuids = append(uuids, dev.UUID)
		}
	}
	go func() {
		defer close(done)
		if err := hw.WatchHealth(ctx, uuids, emit); err != nil && ctx.Err() == nil {
			d.log.Warn("DCGM health watches stopped; NVML events still watched", "err", err)
		}
	}()
	return done
}

// registerWatcher ties a watch to the driver's lifetime: Close cancels it
// and waits for d.watchers, which this counts up by one. The caller calls
// unregister when WatchHealth returns and d.watchers.Done exactly once:
// from the wait goroutine, or itself if it never started one.
func (d *Driver) registerWatcher(ctx context.Context) (context.Context, func(), error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, nil, ErrClosed
	}
	wctx, cancel := context.WithCancel(ctx)
	id := d.nextID
	d.nextID++
	d.cancels[id] = cancel
	d.watchers.Add(1)
	return wctx, func() {
		cancel()
		d.mu.Lock()
		delete(d.cancels, id)
		d.mu.Unlock()
	}, nil
}

// latest is the driver's snapshot now, for naming an event's device: a
// re-partition drops the snapshot (forget), and an XID inside one of the
// new MIG instances names its new UUID only through a fresh discovery. The
// whole GPUs registered for events keep their handles across it. The watch's
// own snapshot serves when that discovery fails.
func (d *Driver) latest(ctx context.Context, s *snapshot) *snapshot {
	d.mu.Lock()
	cur := d.snap
	d.mu.Unlock()
	if cur != nil {
		return cur
	}
	fresh, err := d.current(ctx)
	if err != nil {
		d.log.Warn("rediscovery for a health event failed; naming it from the last layout", "err", err)
		return s
	}
	return fresh
}

// registerEvents registers each whole GPU and returns how many accepted.
func (d *Driver) registerEvents(s *snapshot, set nvml.EventSet) int {
	n := 0
	for _, dev := range s.inv.Devices {
		if dev.Parent != "" {
			continue
		}
		h := s.handles[dev.UUID]
		supported, ret := call(d, "GetSupportedEventTypes", h.GetSupportedEventTypes)
		if ret != nvml.SUCCESS {
			d.log.Warn("cannot read a GPU's supported events; not watching it", "uuid", dev.UUID, "err", ret)
			continue
		}
		mask := supported & wantedEvents
		if mask == 0 {
			continue
		}
		ret, _ = call(d, "RegisterEvents", func() (nvml.Return, nvml.Return) { return h.RegisterEvents(mask, set), nvml.SUCCESS })
		if ret != nvml.SUCCESS {
			d.log.Warn("cannot register a GPU for events; not watching it", "uuid", dev.UUID, "mask", mask, "err", ret)
			continue
		}
		n++
	}
	return n
}

// pump waits for events until ctx is done. A failing wait backs off one
// timeout so a broken event set cannot spin; a GPU the wait reports lost
// yields one "lost" condition.
func (d *Driver) pump(ctx context.Context, set nvml.EventSet, s *snapshot, emit func(gres.Condition)) {
	ms := uint32(max(d.opts.waitTimeout/time.Millisecond, 1))
	lost := map[string]bool{}
	for ctx.Err() == nil {
		ev, ret := call(d, "EventSet.Wait", func() (nvml.EventData, nvml.Return) { return set.Wait(ms) })
		switch ret {
		case nvml.SUCCESS:
			s = d.latest(ctx, s)
			uuid := d.eventUUID(s, ev)
			if uuid == "" {
				d.log.Warn("NVML event for an unknown device", "type", ev.EventType, "data", ev.EventData)
				continue
			}
			if cond, ok := d.condition(uuid, ev); ok && ctx.Err() == nil {
				emit(cond)
			}
		case nvml.ERROR_TIMEOUT:
		case nvml.ERROR_GPU_IS_LOST:
			if uuid := d.eventUUID(s, ev); uuid != "" && !lost[uuid] && ctx.Err() == nil {
				lost[uuid] = true
				emit(gres.Condition{UUID: uuid, Time: d.now(), Kind: "lost", Code: "GPU_IS_LOST",
					Severity: gres.SeverityFatal, Action: healthcheck.RemedyReboot, Message: "GPU is lost (fallen off the bus)"})
			}
			d.backoff(ctx)
		default:
			d.log.Warn("NVML event wait failed", "err", ret)
			d.backoff(ctx)
		}
	}
}

func (d *Driver) backoff(ctx context.Context) {
	t := time.NewTimer(d.opts.waitTimeout)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// eventUUID maps an event's device handle to the discovered UUID, and to
// the MIG device when the event names a GPU/compute instance.
func (d *Driver) eventUUID(s *snapshot, ev nvml.EventData) string {
	if ev.Device == nil {
		return ""
	}
	var uuid string
	if reflect.TypeOf(ev.Device).Comparable() {
		uuid = s.byHandle[ev.Device]
	}
	if uuid == "" {
		u, ret := call(d, "GetUUID", ev.Device.GetUUID)
		if ret != nvml.SUCCESS {
			return ""
		}
		uuid = u
	}
	if ev.GpuInstanceId != nvml.GPU_INSTANCE_ID_ANY {
		if mig, ok := s.mig[migKey{parent: uuid, gi: ev.GpuInstanceId, ci: ev.ComputeInstanceId}]; ok {
			return mig
		}
	}
	return uuid
}
