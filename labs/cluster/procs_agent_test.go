package cluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/scheduler/agent"
)

// TestLeanConfigNamesTheAdapterAndTheSimulatedHost: the config file a
// process lab writes for a parity-agent node is one the agent accepts,
// with the adapter's entry (its policy kept) before the cpu driver over
// the node's simulated root.
func TestLeanConfigNamesTheAdapterAndTheSimulatedHost(t *testing.T) {
	root := t.TempDir()
	adapterCfg := filepath.Join(root, "etc", "parity", "agent.yaml")
	if err := os.MkdirAll(filepath.Dir(adapterCfg), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "drivers:\n  - plugin: unix:///run/x/gaudi.sock\n    callTimeout: 5s\n    reconnect: {min: 250ms, max: 2s}\n"
	if err := os.WriteFile(adapterCfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &presets.Machine{Hostname: "gaudi2-1", Root: root, Adapters: []*presets.AdapterRun{{ConfigFile: adapterCfg}}}
	path := filepath.Join(root, "etc", "parity", "lab-agent.yaml")
	if err := writeLeanConfig(path, m); err != nil {
		t.Fatal(err)
	}
	cfg, err := agent.LoadNodeConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	pl, in := cfg.Plugins(), cfg.InTree()
	if len(cfg.Drivers) != 2 || !cfg.Drivers[0].IsPlugin() || len(pl) != 1 || pl[0].Target != "unix:///run/x/gaudi.sock" || pl[0].CallTimeout != 5*time.Second {
		t.Fatalf("drivers %+v, plugins %+v; want the adapter first, its call timeout kept", cfg.Drivers, pl)
	}
	var s struct{ Root, Hostname string }
	if len(in) != 1 || in[0].Name != "cpu" || json.Unmarshal(in[0].Settings, &s) != nil || s.Root != root || s.Hostname != "gaudi2-1" {
		t.Errorf("in-tree entries %+v (%+v); want cpu over %s as gaudi2-1", in, s, root)
	}
}

// TestFindLeanAgentLooksBesideTheBinaryOnly: parity-agent is used when it
// is an executable beside parity, never from elsewhere.
func TestFindLeanAgentLooksBesideTheBinaryOnly(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "parity")
	if got := findLeanAgent(exe); got != "" {
		t.Errorf("without parity-agent: %q; want none", got)
	}
	lean := filepath.Join(dir, LeanAgent)
	if err := os.WriteFile(lean, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := findLeanAgent(exe); got != "" {
		t.Errorf("with a parity-agent that is not executable: %q; want none", got)
	}
	if err := os.Chmod(lean, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := findLeanAgent(exe); got != lean {
		t.Errorf("findLeanAgent = %q; want %q", got, lean)
	}
}
