package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/scheduler/agent"
	"github.com/parityhpc/parity/vendors"
)

// LeanAgent is the node agent alone (cmd/parity-agent), which a process
// lab runs for nodes whose machine needs no simulator inside the agent.
const LeanAgent = "parity-agent"

// findLeanAgent returns the parity-agent binary beside exe, where `make
// build` and an install put both; "" when there is none, and the lab runs
// `parity agent` for every node. $PATH is not searched: a parity-agent of
// another build there would join this build's controller.
func findLeanAgent(exe string) string {
	if p := filepath.Join(filepath.Dir(exe), LeanAgent); isExecutable(p) {
		return p
	}
	return ""
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// leanNode is a node the lab built for parity-agent: its machine (the
// simulated host's files, its adapters' processes, which the lab owns and
// stops at Down) and the config file that names its drivers.
type leanNode struct {
	machine *presets.Machine
	config  string
}

// buildLeanNode builds node's machine in the lab's process when a plain
// agent can serve it (presets.Template.InProcess is false): the cpu driver
// over the simulated host's root and the adapters on their sockets, both
// named in a config file as a site's would be. ok is false for a node
// that needs `parity agent --sim-lab`.
func (p *Procs) buildLeanNode(ctx context.Context, node string, deviceNodes bool) (ln leanNode, ok bool, err error) {
	tmpl, opts, _, err := nodeTemplate(p.Lab, p.Dir, node, nil, nodeBuild{finder: newAdapterFinder(p.Dir)})
	if err != nil || tmpl.InProcess() {
		return leanNode{}, false, err
	}
	m, err := tmpl.Build(ctx, opts)
	if err != nil {
		return leanNode{}, false, err
	}
	ln = leanNode{machine: m, config: filepath.Join(opts.Root, "etc", "parity", "lab-agent.yaml")}
	if err := writeLeanConfig(ln.config, m); err != nil {
		m.Close()
		return leanNode{}, false, err
	}
	if deviceNodes {
		if err := adapterDeviceNodes(ctx, ln.config); err != nil {
			m.Close()
			return leanNode{}, false, fmt.Errorf("cluster: node %s: %w", node, err)
		}
	}
	return ln, true, nil
}

// writeLeanConfig writes the agent's config file for m: its adapters'
// entries first (the accelerator's place, as BuildMachine orders them),
// then the cpu driver over the simulated host.
func writeLeanConfig(path string, m *presets.Machine) error {
	var entries []any
	for _, run := range m.Adapters {
		b, err := os.ReadFile(run.ConfigFile)
		if err != nil {
			return fmt.Errorf("cluster: %s: %w", m.Hostname, err)
		}
		var cfg struct {
			Drivers []yaml.Node `yaml:"drivers"`
		}
		if err := yaml.Unmarshal(b, &cfg); err != nil {
			return fmt.Errorf("cluster: %s: %s: %w", m.Hostname, run.ConfigFile, err)
		}
		for i := range cfg.Drivers {
			entries = append(entries, &cfg.Drivers[i]) // yaml encodes a Node by pointer
		}
	}
	entries = append(entries, map[string]any{"name": "cpu", "settings": map[string]string{"root": m.Root, "hostname": m.Hostname}})
	out, err := yaml.Marshal(map[string]any{"drivers": entries})
	if err != nil {
		return fmt.Errorf("cluster: %s: agent config: %w", m.Hostname, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	text := "# Written by the lab: parity-agent's drivers for this node, as a site's config file names them.\n" + string(out)
	return os.WriteFile(path, []byte(text), 0o644)
}

// adapterDeviceNodes asks each adapter of the config file for its
// inventory and makes its device files character devices, as SimNode does
// for `parity agent --sim-lab`, so confined jobs meet cgroup device rules.
func adapterDeviceNodes(ctx context.Context, config string) error {
	cfg, err := agent.LoadNodeConfig(config)
	if err != nil {
		return err
	}
	var clients []vendors.Driver
	defer func() {
		for _, c := range clients {
			if cl, ok := c.(io.Closer); ok {
				_ = cl.Close()
			}
		}
	}()
	for _, pl := range cfg.Plugins() {
		d, err := dialPlugin(slog.New(slog.DiscardHandler))(ctx, pl)
		if err != nil {
			return fmt.Errorf("adapter %s: %w", pl.Target, err)
		}
		clients = append(clients, d)
	}
	if len(clients) == 0 {
		return nil
	}
	err = MakeDriversDeviceNodes(ctx, clients)
	if errors.Is(err, vendors.ErrNotApplicable) {
		return nil
	}
	return err
}

// leanAgentArgs are parity-agent's flags for node: those of `parity agent
// --sim-lab`, with the config file in place of the lab's simulators.
func (p *Procs) leanAgentArgs(node, config string, noIsolation bool) []string {
	args := []string{"--controller", p.Addr, "--node", node, "--spool", NodeSpool(p.Dir, node),
		"--cgroup-root", p.CgroupRoot, "--metrics-addr", "off", "--config", config,
		"--kill-wait", "2s", "--sample-interval", "1s"}
	if noIsolation {
		args = append(args, "--no-isolation")
	}
	return args
}
