package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/agentcmd"
	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/vendors"
)

// newAgentCmd is the node agent with the simulated machines (--sim and a
// process lab's --sim-lab); parity-agent is the same agent without them.
func newAgentCmd() *cobra.Command {
	return agentcmd.New(agentcmd.Options{Version: version, Sim: simDrivers, SimNames: presets.Names(),
		ShimArgs: []string{"agent", "shim"}})
}

// simDrivers are the drivers of a process lab's node (with real device
// nodes when jobs are confined), or of a built-in template built under
// the spool.
func simDrivers(ctx context.Context, r agentcmd.SimRequest) ([]vendors.Driver, func(), error) {
	if r.Lab != "" {
		if r.Name != "" {
			return nil, nil, fmt.Errorf("--sim %s and --sim-lab %s: give one", r.Name, r.Lab)
		}
		node := r.Node
		if node == "" {
			node = r.Hostname
		}
		d, closeM, err := cluster.SimNode(ctx, r.Lab, node, r.DeviceNodes)
		if err != nil {
			return nil, nil, err
		}
		return d, func() { _ = closeM() }, nil
	}
	tmpl, err := presets.Lookup(r.Name)
	if err != nil {
		return nil, nil, err
	}
	root := r.Root
	if root == "" {
		root = filepath.Join(r.Spool, "sim-"+r.Name)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, nil, err
	}
	m, err := tmpl.Build(ctx, presets.Options{Root: root, Seed: r.Seed, Hostname: r.Hostname})
	if err != nil {
		return nil, nil, err
	}
	if r.DeviceNodes {
		// Confined jobs meet real device nodes, as in a lab, so the
		// cgroup's device rules can be observed (a live conformance run).
		if err := cluster.MakeDriversDeviceNodes(ctx, m.Drivers); err != nil {
			m.Close()
			return nil, nil, fmt.Errorf("--sim %s: %w", r.Name, err)
		}
	}
	return m.Drivers, func() { m.Close() }, nil
}
