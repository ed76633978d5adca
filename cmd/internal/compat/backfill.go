package compat

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// backfillWaiter is a side whose scheduler plans pending jobs in cycles
// of its own (Slurm's backfill, every bf_interval, 30 s by default): a
// state with jobs waiting is recorded after a cycle that saw it, so the
// planned nodes and the start estimates backfill sets are in it every
// time. A lab's scheduler plans in every pass, which the settle
// conditions already wait for.
type backfillWaiter interface {
	waitBackfill(ctx context.Context, dir string, since time.Time) error
}

// lastCycle finds sdiag's "Last cycle when: Wed Dec 02 14:58:30 2026
// (1796223510)" under Backfilling stats.
var lastCycle = regexp.MustCompile(`(?s)Backfilling stats.*?Last cycle when: [^(\n]*\((\d+)\)`)

// waitBackfill waits until sdiag reports a backfill cycle that began
// after since.
func (s Slurm) waitBackfill(ctx context.Context, dir string, since time.Time) error {
	deadline := time.Now().Add(settle)
	for {
		o, errs, code := s.Run(ctx, dir, nil, "sdiag")
		if code != 0 {
			return fmt.Errorf("compat: sdiag: exit %d: %s", code, errs)
		}
		if m := lastCycle.FindStringSubmatch(o); m != nil {
			if at, err := strconv.ParseInt(m[1], 10, 64); err == nil && at > since.Unix() {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("compat: no backfill cycle since %s within %s", since.Format(time.TimeOnly), settle)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
