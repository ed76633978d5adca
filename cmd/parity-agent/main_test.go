package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/parityhpc/parity/cmd/internal/agentcmd"
)

// TestLinksNoControllerNorLabs: the agent-only binary exists to leave the
// multi-call binary's other roles out of the node's memory; one import of
// the controller, its stores or the labs (and their simulators) would
// bring most of them back.
func TestLinksNoControllerNorLabs(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: runs go list")
	}
	cmd := exec.Command("go", "list", "-deps", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	const mod = "github.com/parityhpc/parity/"
	banned := []string{mod + "scheduler/controller", mod + "scheduler/store", mod + "labs/", mod + "conformance",
		"github.com/hashicorp/raft", "modernc.org/sqlite"}
	for _, dep := range strings.Fields(string(out)) {
		for _, b := range banned {
			if dep == b || strings.HasPrefix(dep, strings.TrimSuffix(b, "/")+"/") {
				t.Errorf("parity-agent links %s", dep)
			}
		}
	}
}

// TestRefusesSimulatedMachines: --sim and --sim-lab belong to `parity
// agent`; this binary says so instead of starting without devices.
func TestRefusesSimulatedMachines(t *testing.T) {
	for _, args := range [][]string{{"--sim", "dgx-h100"}, {"--sim-lab", t.TempDir()}} {
		cmd := agentcmd.New(agentcmd.Options{Version: "test", ShimArgs: []string{"shim"}})
		cmd.SetArgs(append([]string{"--node", "n1", "--no-isolation", "--token", "x", "--spool", t.TempDir(), "--metrics-addr", "off"}, args...))
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		err := cmd.ExecuteContext(context.Background())
		if err == nil || !strings.Contains(err.Error(), "this binary has no simulated machines") || !strings.Contains(err.Error(), args[1]) {
			t.Errorf("%v: %v", args, err)
		}
	}
}
