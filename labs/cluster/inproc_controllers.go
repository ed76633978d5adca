package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/scheduler/store"
)

// leaderWait bounds the wait for a lab's controllers to elect a leader.
const leaderWait = time.Minute

// startControllers writes the lab's cluster file and starts its n
// controllers in this process, then waits for one to lead.
func (c *Cluster) startControllers(ctx context.Context, n int, admins, users []string, metricsAddr string) error {
	var lis []net.Listener
	if n > 1 {
		var err error
		if lis, c.ctlAddrs, err = reserveListeners(n); err != nil {
			return err
		}
		if c.key, err = shareKey(c.Dir, n); err != nil {
			closeAll(lis)
			return err
		}
		c.choices.controllers = c.ctlAddrs
	}
	stateDir := ControllerStateDir(c.Dir, 0)
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		closeAll(lis)
		return err
	}
	text := controllerYAML(c.Lab, stateDir, admins, users, c.choices)
	path := filepath.Join(c.Dir, "cluster.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		closeAll(lis)
		return err
	}
	cfg, err := config.Parse(path, []byte(text))
	if err != nil {
		closeAll(lis)
		return fmt.Errorf("cluster: lab %s as a cluster config: %w", c.Lab.Name, err)
	}
	c.cfg = cfg
	// The lab keeps an accounting ledger like a production controller, so
	// `parity acct --ledger DIR/controller/accounting.db` works after a run.
	// With several controllers each keeps its own; this is the first's.
	c.LedgerPath = filepath.Join(stateDir, "accounting.db")
	if metricsAddr == "" {
		metricsAddr = "off"
	}
	for i := range n {
		var l net.Listener
		if lis != nil {
			l = lis[i]
		}
		ctl, err := c.newController(ctx, i, l, metricsAddr)
		if err != nil {
			if lis != nil {
				closeAll(lis[i+1:])
			}
			return err
		}
		c.ctls = append(c.ctls, ctl)
		metricsAddr = "off" // the first controller's only
	}
	c.MetricsAddr = c.ctls[0].MetricsAddr()
	if n == 1 {
		c.key, c.ctlAddrs = c.ctls[0].Key(), []string{c.ctls[0].Addr()}
	}
	c.Addr = joinAddrs(c.ctlAddrs)
	if n > 1 {
		if _, err := c.Leader(ctx); err != nil {
			return err
		}
	}
	return nil
}

// newController starts the i-th controller, on lis when the lab runs
// several (it advertises lis's address, its entry in controllers:).
func (c *Cluster) newController(ctx context.Context, i int, lis net.Listener, metricsAddr string) (*controller.Controller, error) {
	stateDir := ControllerStateDir(c.Dir, i)
	ledgerPath := filepath.Join(stateDir, "accounting.db")
	db, err := store.OpenSQLite(ctx, ledgerPath, store.Options{Logger: c.log})
	if err != nil {
		closeAll([]net.Listener{lis})
		return nil, fmt.Errorf("cluster: ledger: %w", err)
	}
	ledger, err := store.NewSpooled(db, ledgerPath+".spool", store.SpoolOptions{Logger: c.log})
	if err != nil {
		db.Close()
		closeAll([]net.Listener{lis})
		return nil, fmt.Errorf("cluster: ledger spool: %w", err)
	}
	var now func() time.Time
	if c.Clock != nil {
		now = c.Clock.Now
	}
	log := c.log.With("daemon", controllerName(i))
	opts := controller.Options{Config: c.cfg, Listen: "127.0.0.1:0", StateDir: stateDir,
		MetricsAddr: metricsAddr, Logger: log, Ledger: ledger, Now: now}
	if lis != nil {
		opts.Listener, opts.Advertise = lis, lis.Addr().String()
	}
	ctl, err := controller.New(opts)
	if err != nil {
		ledger.Close()
		closeAll([]net.Listener{lis})
		return nil, err
	}
	// It lives until Down or StopController, not as long as the call that
	// started (or restarted) it.
	if err := ctl.Start(context.WithoutCancel(ctx)); err != nil {
		ctl.Close()
		return nil, err
	}
	return ctl, nil
}

func closeAll(ls []net.Listener) {
	for _, l := range ls {
		if l != nil {
			l.Close()
		}
	}
}

// Controllers lists the lab's controller addresses, running or not.
func (c *Cluster) Controllers() []string {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	return slices.Clone(c.ctlAddrs)
}

// running lists the addresses of the controllers that run.
func (c *Cluster) running() []string {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	var out []string
	for i, ctl := range c.ctls {
		if ctl != nil {
			out = append(out, c.ctlAddrs[i])
		}
	}
	return out
}

// Leader waits until a running controller leads and returns its address.
func (c *Cluster) Leader(ctx context.Context) (string, error) {
	return waitLeader(ctx, c.key, c.running, leaderWait)
}

// StopController crashes the controller at addr (controller.Crash: its
// raft stops first, with no hand-off, then its listener and store), so the
// others elect a leader after a heartbeat timeout, as when a process is
// killed.
func (c *Cluster) StopController(_ context.Context, addr string) error {
	c.ctlMu.Lock()
	i, err := controllerIndex(c.ctlAddrs, addr)
	var ctl *controller.Controller
	if err == nil {
		ctl, c.ctls[i] = c.ctls[i], nil
	}
	c.ctlMu.Unlock()
	switch {
	case len(c.ctlAddrs) < 2:
		return errOneController
	case err != nil:
		return err
	case ctl == nil:
		return fmt.Errorf("cluster: controller %s is already stopped", addr)
	}
	return ctl.Crash()
}

// RestartController starts the stopped controller at addr again on its
// state directory and address, and returns once it follows the leader and
// has caught up with it.
func (c *Cluster) RestartController(ctx context.Context, addr string) error {
	c.ctlMu.Lock()
	i, err := controllerIndex(c.ctlAddrs, addr)
	if err == nil && c.ctls[i] != nil {
		err = fmt.Errorf("cluster: controller %s runs already", addr)
	}
	c.ctlMu.Unlock()
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cluster: restart controller %s: %w", addr, err)
	}
	ctl, err := c.newController(ctx, i, lis, "off")
	if err != nil {
		return err
	}
	c.ctlMu.Lock()
	c.ctls[i] = ctl
	c.ctlMu.Unlock()
	leader, err := c.Leader(ctx)
	if err != nil {
		return err
	}
	return waitCaughtUp(ctx, c.key, addr, leader, leaderWait)
}

// closeControllers stops every running controller.
func (c *Cluster) closeControllers() error {
	c.ctlMu.Lock()
	ctls := c.ctls
	c.ctls = nil
	c.ctlMu.Unlock()
	var errs []error
	for _, ctl := range ctls {
		if ctl != nil {
			errs = append(errs, ctl.Close())
		}
	}
	return errors.Join(errs...)
}
