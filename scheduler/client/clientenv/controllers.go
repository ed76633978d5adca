package clientenv

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Several controllers are named by a comma-separated list
// ("a:6817,b:6817,c:6817", as PARITY_CONTROLLER or --controller). The
// gRPC client and the lean submit client follow the leader among them
// by the same rules and bounds, kept here where both (one of which links
// no gRPC) can read them.

// FailoverBudget is how long a call keeps looking for a leader: longer
// than the slowest election the controllers' timing allows.
const FailoverBudget = 15 * time.Second

// GiveUpMargin is how long before the caller's deadline a call stops
// looking for a leader, so that its error says why (no leader), not only
// that time ran out.
const GiveUpMargin = 100 * time.Millisecond

// SplitControllers reads a controllers' list: its addresses in order,
// blanks and repeats dropped; one address is a list of one.
func SplitControllers(addr string) []string {
	var out []string
	for a := range strings.SplitSeq(addr, ",") {
		if a = strings.TrimSpace(a); a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Sleep waits d, or less if ctx ends first (its error then): the pause
// between a client's attempts.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
