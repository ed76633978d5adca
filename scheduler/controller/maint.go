package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/parityhpc/parity/healthcheck"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// maintain runs the periodic upkeep through the writer: nodes silent for
// longer than NodeDownTimeout go DOWN and their jobs are requeued or
// failed; finished jobs older than MinJobAge leave memory and the store;
// decision log entries past the retention are deleted; running jobs'
// usage is charged for fair-share; health trackers see time pass (silent
// devices become unknown); idle GPU jobs move along the reclaim ladder;
// records a ledger outage spooled are written.
func (c *Controller) maintain(ctx context.Context) error {
	c.drainLedgerSoon()
	now := c.now()
	evWrites, expired, err := c.expireEventsWrites(now.Add(-c.cfg.EventRetention))
	if err != nil {
		return err
	}
	var health map[string][]healthcheck.Decision
	err = c.mutate(ctx, func() ([]write, func(), error) {
		ws := evWrites
		var afters []func()
		for _, name := range c.st.names {
			w, a := c.checkSilentLocked(c.st.nodes[name], now)
			ws = append(ws, w...)
			afters = append(afters, a...)
		}
		ws = append(ws, c.purgeLocked(now)...)
		ws = append(ws, c.purgeReservationsLocked(now)...)
		c.accrueUsageLocked(now)
		if uw, err := c.usageWriteLocked(); err != nil {
			// Keep maintaining; the usage stays in memory until it encodes.
			c.log.Error("fair-share usage not stored", "err", err)
		} else {
			ws = append(ws, uw...)
		}
		iw, ia := c.expireInteractiveLocked(now)
		ws, afters = append(ws, iw...), append(afters, ia...)
		hw, ha, applied := c.evaluateHealthLocked(now)
		health = applied
		rw, ra := c.reclaimLocked(now)
		ws = append(append(ws, hw...), rw...)
		afters = append(append(afters, ha...), ra...)
		return ws, func() {
			for _, a := range afters {
				a()
			}
			if expired > 0 {
				c.log.Debug("decision log expired", "entries", expired)
			}
			if len(afters) > 0 {
				c.trigger()
			}
		}, nil
	})
	if err != nil {
		for _, name := range slices.Sorted(maps.Keys(health)) {
			c.healthNotApplied(name, health[name], err)
		}
	}
	return err
}

// checkSilentLocked takes a node DOWN when its agent has been silent past
// the timeout (or never re-registered since this controller started while
// jobs ran there).
func (c *Controller) checkSilentLocked(n *node, now time.Time) ([]write, []func()) {
	if n.Down {
		return nil, nil
	}
	silentSince := n.lastHeartbeat
	if !n.registered {
		if len(n.jobs) == 0 {
			return nil, nil
		}
		silentSince = c.started
	}
	if now.Sub(silentSince) <= c.cfg.NodeDownTimeout {
		return nil, nil
	}
	if _, err := c.st.m.Apply(cstate.SetNode{Node: n.name, By: "scheduler", Reason: cstate.ReasonNotResponding, State: cstate.NodeDown}, now); err != nil {
		c.log.Error("node state", "node", n.name, "err", err)
		return nil, nil
	}
	ws, afters := c.failNodeJobsLocked(n, "node "+n.name+" not responding")
	nw, err := n.write()
	if err == nil {
		ws = append(ws, nw)
	}
	ws = append(ws, c.record(&pb.Event{Kind: EventDown, Node: n.name, Actor: "scheduler", Reason: n.Reason,
		Detail: "silent since " + silentSince.UTC().Format(time.RFC3339)})...)
	c.log.Warn("node state", "node", n.name, "state", "DOWN", "reason", n.Reason)
	return ws, afters
}

// purgeLocked forgets finished jobs older than MinJobAge (their decision
// log entries stay until the log's own retention).
func (c *Controller) purgeLocked(now time.Time) []write {
	var ws []write
	for id, j := range c.st.jobs {
		if finished(j.State) && now.Sub(j.End) > c.cfg.MinJobAge && c.st.m.Forget(id) {
			c.st.forgetKey(j)
			ws = append(ws, write{bucket: bucketJobs, key: jobKey(id)}, write{bucket: bucketScripts, key: jobKey(id)})
		}
	}
	return ws
}

// accrueUsageLocked brings the fair-share ledger (the state machine's) up
// to now: each running job is charged its billing a second, the number
// the ledger records, to its user association (policy sums them up the
// tree), and old usage decays by the half-life, integrated exactly. The
// usage is stored with each maintenance pass (usageWriteLocked), so a
// restart resumes from the last pass: decay and running jobs' charges
// then cover the time the controller was down.
func (c *Controller) accrueUsageLocked(now time.Time) {
	if _, err := c.st.m.Apply(cstate.Accrue{}, now); err != nil {
		c.log.Error("fair-share usage not accrued", "err", err)
	}
}

// usageWriteLocked is the write that stores the usage as last charged
// (none before the first charge).
func (c *Controller) usageWriteLocked() ([]write, error) {
	u := c.st.m.Usage()
	if u.Charged().IsZero() {
		return nil, nil
	}
	val, err := json.Marshal(usageRecord{Charged: u.Charged(), Usage: u.Values()})
	if err != nil {
		return nil, fmt.Errorf("controller: encode fair-share usage: %w", err)
	}
	return []write{{bucket: bucketMeta, key: keyUsage, val: val}}, nil
}
