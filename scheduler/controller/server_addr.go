package controller

import (
	"context"
	"fmt"
	"net"
	"slices"
)

func (c *Controller) listen() (net.Listener, error) {
	if c.opts.Listener != nil {
		return c.opts.Listener, nil
	}
	listen := c.opts.Listen
	if listen == "" {
		listen = c.cfg.Controller.Listen
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("controller: listen %s: %w", listen, err)
	}
	return lis, nil
}

// Addr is the address the API listens on.
func (c *Controller) Addr() string { return c.lis.Addr().String() }

// MetricsAddr is the Prometheus listener's address, or "" when off.
func (c *Controller) MetricsAddr() string {
	if c.httpLis == nil {
		return ""
	}
	return c.httpLis.Addr().String()
}

func (c *Controller) nodesSnapshot() []*node {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*node, 0, len(c.st.nodes))
	for _, name := range c.st.names {
		out = append(out, c.st.nodes[name])
	}
	return out
}

// Run starts the controller and serves until ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	if err := c.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return c.Close()
}

// trigger asks for a scheduling pass soon (debounced by the loop).
func (c *Controller) trigger() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
