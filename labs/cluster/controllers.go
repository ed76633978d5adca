package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// A lab with several controllers (Options.Controllers, ProcOptions.Controllers)
// runs them as an operator would: the cluster file lists them all, each has
// its own state directory holding the same cluster key, and they elect a
// leader among themselves. Their ports are chosen by the OS before the
// cluster file is written (the list must name them), and the listeners stay
// open from then on, so no other process can take a port in between.

// checkControllers validates a lab's controller count: 0 or 1 is one
// controller (the default), 3 or 5 a replicated group.
func checkControllers(n int) error {
	switch n {
	case 0, 1, 3, 5:
		return nil
	}
	return fmt.Errorf("cluster: controllers: %d; a lab runs 1, 3 or 5 controllers (a majority must acknowledge every change)", n)
}

// ControllerStateDir is the state directory of the i-th controller (from
// 0) of the lab instance in dir: the first is DIR/controller, as in a lab
// with one controller.
func ControllerStateDir(dir string, i int) string {
	if i == 0 {
		return filepath.Join(dir, "controller")
	}
	return filepath.Join(dir, fmt.Sprintf("controller-%d", i+1))
}

// controllerName is the i-th controller's daemon name (pid file, log).
func controllerName(i int) string {
	if i == 0 {
		return "controller"
	}
	return fmt.Sprintf("controller-%d", i+1)
}

// reserveListeners opens n loopback listeners on ports the OS picks.
func reserveListeners(n int) ([]net.Listener, []string, error) {
	var ls []net.Listener
	var addrs []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, o := range ls {
				o.Close()
			}
			return nil, nil, fmt.Errorf("cluster: controller listener: %w", err)
		}
		ls, addrs = append(ls, l), append(addrs, l.Addr().String())
	}
	return ls, addrs, nil
}

// shareKey creates the cluster key in the first controller's state
// directory and copies it into the others', as an operator copies
// cluster.key onto every controller host.
func shareKey(dir string, n int) (auth.Key, error) {
	for i := range n {
		if err := os.MkdirAll(ControllerStateDir(dir, i), 0o700); err != nil {
			return nil, err
		}
	}
	first := filepath.Join(ControllerStateDir(dir, 0), "cluster.key")
	key, err := auth.LoadOrCreateKey(first)
	if err != nil {
		return nil, err
	}
	text, err := os.ReadFile(first)
	if err != nil {
		return nil, err
	}
	for i := 1; i < n; i++ {
		if err := os.WriteFile(filepath.Join(ControllerStateDir(dir, i), "cluster.key"), text, 0o600); err != nil {
			return nil, fmt.Errorf("cluster: share the cluster key: %w", err)
		}
	}
	return key, nil
}

// controllerIndex finds addr among the lab's controllers.
func controllerIndex(addrs []string, addr string) (int, error) {
	for i, a := range addrs {
		if a == addr {
			return i, nil
		}
	}
	return 0, fmt.Errorf("cluster: %q is not one of the lab's controllers %v", addr, addrs)
}

// statusOf asks the controller at addr alone for its view (nil when it
// does not answer within a second).
func statusOf(ctx context.Context, key auth.Key, addr string) *pb.ControllerStatus {
	tok, err := signUser(key, "root", auth.RoleAdmin)
	if err != nil {
		return nil
	}
	cl, err := client.Dial(ctx, addr, tok)
	if err != nil {
		return nil
	}
	defer cl.Close()
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := cl.ControllerStatus(cctx)
	if err != nil {
		return nil
	}
	return st
}

// waitLeader polls the controllers until one of up (those running) says
// it serves, and returns its address.
func waitLeader(ctx context.Context, key auth.Key, up func() []string, limit time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		addrs := up()
		for _, a := range addrs {
			if st := statusOf(ctx, key, a); st != nil && st.GetServing() {
				return a, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("cluster: no controller of %v leads: %w", addrs, ctx.Err())
		case <-tick.C:
		}
	}
}

// waitCaughtUp polls the controller at addr until it follows leader and
// has applied what leader had committed when the wait began, so a
// restarted controller is a voter again before the next fault.
func waitCaughtUp(ctx context.Context, key auth.Key, addr, leader string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var want uint64
	if st := statusOf(ctx, key, leader); st != nil {
		want = st.GetCommitIndex()
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		st := statusOf(ctx, key, addr)
		if st != nil && st.GetLeader() != "" && st.GetAppliedIndex() >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: controller %s did not catch up with %s (index %d): %w", addr, leader, want, ctx.Err())
		case <-tick.C:
		}
	}
}

// errOneController is returned by fault hooks of a lab with one controller.
var errOneController = errors.New("cluster: the lab runs one controller; a failover needs three or five (--controllers 3)")

// joinAddrs is the lab's controller list as clients take it (PARITY_CONTROLLER).
func joinAddrs(addrs []string) string { return strings.Join(addrs, ",") }

// LeaderLedger is the accounting ledger of the controller that leads now:
// each controller keeps its own, written while it leads (a new leader
// records every job that ran into its own when it takes over), so with
// several controllers LedgerPath, the first's, may be behind. It is
// LedgerPath with one controller, or when no leader answers within wait.
func (c *Cluster) LeaderLedger(ctx context.Context, wait time.Duration) string {
	addrs := c.Controllers()
	if len(addrs) < 2 {
		return c.LedgerPath
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	lead, err := c.Leader(ctx)
	if err != nil {
		return c.LedgerPath
	}
	i, err := controllerIndex(addrs, lead)
	if err != nil {
		return c.LedgerPath
	}
	return filepath.Join(ControllerStateDir(c.Dir, i), "accounting.db")
}
