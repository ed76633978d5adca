package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/agent/nodecheck"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/vendors"
)

// maxQueuedResults bounds diagnoses and node checks kept for the next
// heartbeat while the controller is unreachable.
const maxQueuedResults = 64

// heartbeatNow asks the heartbeat loop to send one at once.
func (a *Agent) heartbeatNow() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// diagnose runs the owning driver's active check on a device in the
// background and reports the outcome with the next heartbeat. An order
// for a device already being diagnosed is dropped (orders repeat). A
// device no driver can diagnose gets a failed diagnosis naming why: the
// controller never sees a pass that was not checked.
func (a *Agent) diagnose(ctx context.Context, uuid string, level int) {
	if level < 1 {
		level = 1
	}
	a.mu.Lock()
	if a.diagnosing[uuid] {
		a.mu.Unlock()
		return
	}
	a.diagnosing[uuid] = true
	a.mu.Unlock()
	a.bg.Add(1)
	go func() {
		defer a.bg.Done()
		start := time.Now()
		d := a.runDiagnosis(ctx, uuid, level)
		a.log.Info("diagnosis", "device", uuid, "level", level, "passed", d.Passed, "took", time.Since(start).Round(time.Millisecond))
		a.mu.Lock()
		delete(a.diagnosing, uuid)
		if ctx.Err() == nil {
			a.diagnoses = appendBounded(a.diagnoses, api.DiagnosisToProto(d, time.Now()))
		}
		a.mu.Unlock()
		a.heartbeatNow()
	}()
}

func (a *Agent) runDiagnosis(ctx context.Context, uuid string, level int) gres.Diagnosis {
	failed := func(format string, args ...any) gres.Diagnosis {
		return gres.Diagnosis{UUID: uuid, Level: level, Tests: []gres.DiagnosisTest{{Name: "diagnose", Message: fmt.Sprintf(format, args...)}}}
	}
	dev, ok := a.inventory().Device(uuid)
	if !ok {
		return failed("device %s is not in this node's inventory", uuid)
	}
	for _, drv := range a.cfg.Drivers {
		if drv.Info().Vendor != dev.Vendor {
			continue
		}
		dg, ok := drv.(vendors.Diagnoser)
		if !ok {
			return failed("driver %s cannot diagnose devices", drv.Info().Name)
		}
		ctx, cancel := context.WithTimeout(ctx, a.cfg.DiagnoseTimeout)
		defer cancel()
		d, err := dg.Diagnose(ctx, uuid, level)
		if err != nil {
			return failed("%s level %d: %v", drv.Info().Name, level, err)
		}
		return d
	}
	return failed("no driver for vendor %q", dev.Vendor)
}

// nodeChecks runs the node's own checks on their interval (the first run
// at once) and queues the results; a failure is sent at once.
func (a *Agent) nodeChecks(ctx context.Context) {
	t := time.NewTicker(a.cfg.NodeCheckInterval)
	defer t.Stop()
	for {
		results := nodecheck.RunAll(ctx, a.cfg.NodeChecks, time.Now)
		if ctx.Err() != nil {
			return
		}
		failed := false
		a.mu.Lock()
		for _, r := range results {
			failed = failed || !r.Passed
			a.checks = appendBounded(a.checks, &pb.NodeCheck{Name: r.Name, Time: api.Timestamp(r.Time), Passed: r.Passed, Message: r.Message})
			if !r.Passed {
				a.log.Warn("node check failed", "check", r.Name, "message", r.Message)
			}
		}
		a.mu.Unlock()
		if failed {
			a.heartbeatNow()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// requeueResults puts back, in front and in order, what a failed
// heartbeat carried (the controller counts consecutive check results).
func (a *Agent) requeueResults(ds []*pb.Diagnosis, cs []*pb.NodeCheck) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.diagnoses = appendBounded(ds, a.diagnoses...)
	a.checks = appendBounded(cs, a.checks...)
}

// appendBounded appends and keeps the newest maxQueuedResults.
func appendBounded[T any](q []T, vs ...T) []T {
	q = append(q[:len(q):len(q)], vs...)
	if k := len(q) - maxQueuedResults; k > 0 {
		q = q[k:]
	}
	return q
}
