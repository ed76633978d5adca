package agent

import (
	"context"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/agent/telemetry"
)

// sampleOnJumps runs the telemetry loop on its interval and also at once
// after each jump of the node's clock, followed by a heartbeat: the
// samples a jump produces carry the new time, and reach the controller
// before anything waiting for a heartbeat at that time goes on.
func (a *Agent) sampleOnJumps(ctx context.Context, loop *telemetry.Loop) {
	iv := loop.Interval
	if iv <= 0 {
		iv = time.Second
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	var buf []gres.Sample
	for {
		jumped := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-a.cfg.ClockJumps:
			jumped = true
		}
		var err error
		if buf, err = loop.Cycle(ctx, buf[:0]); err != nil && ctx.Err() == nil {
			a.log.Warn("device sampling failed", "err", err)
		}
		if jumped {
			a.heartbeatNow()
		}
	}
}
