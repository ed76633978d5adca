package nvdcgm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
)

// System is a DCGM health-watch system (DCGM_HEALTH_WATCH_* bit values).
type System uint32

// Systems DCGM watches.
const (
	SystemPCIe    System = 0x1
	SystemNVLink  System = 0x2
	SystemPMU     System = 0x4
	SystemMCU     System = 0x8
	SystemMemory  System = 0x10
	SystemSM      System = 0x20
	SystemInforom System = 0x40
	SystemThermal System = 0x80
	SystemPower   System = 0x100
	SystemDriver  System = 0x200
)

// String is the system's name in condition codes ("memory", "pcie", …).
func (s System) String() string {
	switch s {
	case SystemPCIe:
		return "pcie"
	case SystemNVLink:
		return "nvlink"
	case SystemPMU:
		return "pmu"
	case SystemMCU:
		return "mcu"
	case SystemMemory:
		return "memory"
	case SystemSM:
		return "sm"
	case SystemInforom:
		return "inforom"
	case SystemThermal:
		return "thermal"
	case SystemPower:
		return "power"
	case SystemDriver:
		return "driver"
	}
	return "unknown"
}

// Health is a DCGM health result (DCGM_HEALTH_RESULT_*).
type Health int

// Health results.
const (
	HealthPass Health = 0
	HealthWarn Health = 10
	HealthFail Health = 20
)

// Incident is one DCGM health incident on one GPU.
type Incident struct {
	System  System
	Health  Health
	Message string
	// Code is the DCGM_FR_* error code, 0 when the binding does not report
	// it (go-dcgm at the pinned version keeps only the message).
	Code int
}

// healthAPI is the hardware edge of the health watch: go-dcgm in
// production (goDCGM), a fake in tests. Calls are serialised by Client.
type healthAPI interface {
	// gpuIDs maps each GPU DCGM manages from its UUID to DCGM's GPU id.
	gpuIDs() (map[string]uint, error)
	// check arms the health watches on one GPU and returns its incidents.
	check(id uint) ([]Incident, error)
}

// Defaults of the health watch.
const (
	DefaultHealthInterval = 30 * time.Second
	// DefaultHealthWarmup polls pass before PCIe, thermal and power
	// incidents count: DCGM needs about a minute of data for those.
	DefaultHealthWarmup = 2
)

// condition maps one incident to a gres.Condition. Warnings recommend
// nothing (the policy counts them in its window); failures recommend what
// the failing system calls for: a reset for memory, SM, PCIe and the
// micro-controllers, a person (drain) for NVLink, thermal, power and the
// InfoROM, a reboot for the driver. ok is false for a passing result.
func condition(uuid string, in Incident, now time.Time) (gres.Condition, bool) {
	c := gres.Condition{UUID: uuid, Time: now, Kind: "dcgm", Code: in.System.String()}
	if in.Code != 0 {
		c.Code += ":" + strconv.Itoa(in.Code)
	}
	msg := in.Message
	if msg == "" {
		msg = "no detail"
	}
	switch in.Health {
	case HealthWarn:
		c.Severity, c.Action = gres.SeverityWarning, healthcheck.RemedyNone
		c.Message = fmt.Sprintf("DCGM %s watch warning: %s", in.System, msg)
	case HealthFail:
		c.Severity = gres.SeverityFatal
		c.Message = fmt.Sprintf("DCGM %s watch failure: %s", in.System, msg)
		switch in.System {
		case SystemMemory, SystemSM, SystemPCIe, SystemPMU, SystemMCU:
			c.Action = healthcheck.RemedyReset
		case SystemDriver:
			c.Action = healthcheck.RemedyReboot
		default:
			c.Action = healthcheck.RemedyDrain
		}
	default:
		return gres.Condition{}, false
	}
	return c, true
}

// needsWarmup names the systems whose checks mean nothing until DCGM has
// collected about a minute of data.
func needsWarmup(s System) bool {
	return s == SystemPCIe || s == SystemThermal || s == SystemPower
}

// WatchHealth polls DCGM's health watches (PCIe, NVLink, memory, SM,
// thermal, power, driver, micro-controllers, InfoROM) on the GPUs with the
// given UUIDs every Config.HealthInterval, the first time at once, and
// emits a condition when an incident appears — not again while it
// persists, again if it clears and returns. During the first
// Config.HealthWarmup polls PCIe, thermal and power incidents are ignored.
// A GPU DCGM does not manage is logged and skipped; a failed check is
// logged and retried at the next poll. It returns nil when ctx is done,
// ErrClosed after Close, and an error when DCGM manages none of the GPUs.
// emit is never called after WatchHealth returns.
func (c *Client) WatchHealth(ctx context.Context, uuids []string, emit func(gres.Condition)) error {
	if emit == nil {
		return errors.New("nvdcgm: watch health: emit is nil")
	}
	t := time.NewTicker(c.cfg.HealthInterval)
	defer t.Stop()
	return c.watch(ctx, uuids, emit, t.C)
}

// watch is WatchHealth with the poll ticks injected (tests send them).
func (c *Client) watch(ctx context.Context, uuids []string, emit func(gres.Condition), ticks <-chan time.Time) error {
	ids, err := c.resolve(uuids)
	if err != nil {
		return err
	}
	order := slices.Sorted(func(yield func(string) bool) {
		for u := range ids {
			if !yield(u) {
				return
			}
		}
	})
	active := map[string]map[Incident]bool{} // per GPU: incidents seen at the last poll
	for poll := 0; ; poll++ {
		for _, uuid := range order {
			incs, err := c.checkOne(ids[uuid])
			if errors.Is(err, ErrClosed) {
				return err
			}
			if err != nil {
				c.cfg.Logger.Warn("DCGM health check failed; retrying at the next poll", "uuid", uuid, "err", err)
				continue
			}
			seen := map[Incident]bool{}
			for _, in := range incs {
				if in.Health == HealthPass || poll < c.cfg.HealthWarmup && needsWarmup(in.System) {
					continue
				}
				seen[in] = true
				if active[uuid][in] || ctx.Err() != nil {
					continue
				}
				if cond, ok := condition(uuid, in, c.cfg.Now()); ok {
					emit(cond)
				}
			}
			active[uuid] = seen
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
		}
	}
}

// resolve maps the UUIDs to DCGM ids, dropping (and logging) the ones DCGM
// does not manage.
func (c *Client) resolve(uuids []string) (map[string]uint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	all, err := c.health.gpuIDs()
	if err != nil {
		return nil, fmt.Errorf("nvdcgm: list GPUs: %w", err)
	}
	ids := map[string]uint{}
	for _, u := range uuids {
		id, ok := all[u]
		if !ok {
			c.cfg.Logger.Warn("DCGM does not manage this GPU; no DCGM health watch on it", "uuid", u)
			continue
		}
		ids[u] = id
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("nvdcgm: watch health: DCGM manages none of the %d GPUs", len(uuids))
	}
	return ids, nil
}

func (c *Client) checkOne(id uint) ([]Incident, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	return c.health.check(id)
}
