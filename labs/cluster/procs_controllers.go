package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// startControllers starts the lab's controller processes (one, or those
// whose listeners writeFiles opened) and, with several, waits for a leader.
func (p *Procs) startControllers(ctx context.Context) error {
	n := max(len(p.lis), 1)
	p.ctls = make([]*child, n)
	for i := range n {
		var lis net.Listener
		if p.lis != nil {
			lis, p.lis[i] = p.lis[i], nil
		}
		if err := p.spawnController(ctx, i, lis); err != nil {
			return err
		}
	}
	p.lis = nil
	if n == 1 {
		p.Addr = p.ctlAddrs[0]
		return nil
	}
	p.Addr = joinAddrs(p.ctlAddrs)
	_, err := p.Leader(ctx)
	return err
}

// spawnController starts the i-th controller process and waits until it
// listens. With lis, the process serves that socket (--listen-fd) and
// advertises its address; without, it picks a port and the lab reads it.
func (p *Procs) spawnController(ctx context.Context, i int, lis net.Listener) error {
	name := controllerName(i)
	addrFile := filepath.Join(p.Dir, RunDir, name+".addr")
	os.Remove(addrFile) // a restarted controller's old one
	args := []string{"controller", "--config", filepath.Join(p.Dir, "cluster.yaml"), "--address-file", addrFile,
		"--metrics-addr", "off", "--state-dir", ControllerStateDir(p.Dir, i)}
	var files []*os.File
	if lis != nil {
		f, err := lis.(*net.TCPListener).File()
		lis.Close() // the child holds the socket from here on
		if err != nil {
			return fmt.Errorf("cluster: pass %s its listener: %w", name, err)
		}
		defer f.Close()
		files = []*os.File{f}
		args = append(args, "--listen-fd", "3", "--advertise", p.ctlAddrs[i])
	} else {
		args = append(args, "--listen", "127.0.0.1:0")
	}
	c, err := p.spawn(p.exe, name, nil, files, args...)
	p.mu.Lock()
	p.ctls[i] = c
	p.mu.Unlock()
	if err != nil {
		return err
	}
	addr, err := waitAddrFile(ctx, addrFile, c)
	if err != nil {
		return err
	}
	if lis == nil {
		p.ctlAddrs = []string{addr}
	}
	return nil
}

// waitAddrFile waits for the address a controller writes once it listens.
func waitAddrFile(ctx context.Context, path string, c *child) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b)), nil
		}
		select {
		case <-c.done:
			return "", fmt.Errorf("cluster: the %s exited at start: %s (see %s)", c.name, c.cmd.ProcessState, c.log.Name())
		case <-ctx.Done():
			return "", fmt.Errorf("cluster: the %s wrote no address: %w (see %s)", c.name, ctx.Err(), c.log.Name())
		case <-tick.C:
		}
	}
}

// Controllers lists the lab's controller addresses, running or not.
func (p *Procs) Controllers() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.ctlAddrs)
}

func (p *Procs) running() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for i, c := range p.ctls {
		if c != nil {
			out = append(out, p.ctlAddrs[i])
		}
	}
	return out
}

// Leader waits until a running controller leads and returns its address.
func (p *Procs) Leader(ctx context.Context) (string, error) {
	return waitLeader(ctx, p.key, p.running, leaderWait)
}

// StopController kills the controller process at addr with SIGKILL (no
// goodbye to its peers, commits in flight fail) and reaps it.
func (p *Procs) StopController(_ context.Context, addr string) error {
	p.mu.Lock()
	i, err := controllerIndex(p.ctlAddrs, addr)
	var c *child
	if err == nil {
		c, p.ctls[i] = p.ctls[i], nil
	}
	n := len(p.ctlAddrs)
	p.mu.Unlock()
	switch {
	case n < 2:
		return errOneController
	case err != nil:
		return err
	case c == nil:
		return fmt.Errorf("cluster: controller %s is already stopped", addr)
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("cluster: kill controller %s: %w", addr, err)
	}
	<-c.done
	c.log.Close()
	os.Remove(filepath.Join(p.Dir, RunDir, c.name+".pid"))
	return nil
}

// RestartController starts the killed controller at addr again on its
// state directory and port, and returns once it has caught up with the
// leader.
func (p *Procs) RestartController(ctx context.Context, addr string) error {
	p.mu.Lock()
	i, err := controllerIndex(p.ctlAddrs, addr)
	if err == nil && p.ctls[i] != nil {
		err = fmt.Errorf("cluster: controller %s runs already", addr)
	}
	p.mu.Unlock()
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cluster: restart controller %s: %w", addr, err)
	}
	if err := p.spawnController(ctx, i, lis); err != nil {
		return err
	}
	leader, err := p.Leader(ctx)
	if err != nil {
		return err
	}
	return waitCaughtUp(ctx, p.key, addr, leader, leaderWait)
}
