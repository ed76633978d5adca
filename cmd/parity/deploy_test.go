package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/agentcmd"
)

// The shipped systemd units must start commands this binary accepts, and
// the agent's must leave the job supervisor and the spool alone when the
// agent stops: otherwise every agent restart ends the node's jobs.
func TestSystemdUnitsStartValidCommands(t *testing.T) {
	units, err := filepath.Glob("../../deploy/systemd/*.service")
	if err != nil || len(units) == 0 {
		t.Fatalf("no unit files found (%v)", err)
	}
	for _, u := range units {
		keys := unitKeys(t, u)
		exec := strings.Fields(keys["ExecStart"])
		var cmd *cobra.Command
		var rest []string
		switch {
		case len(exec) >= 1 && filepath.Base(exec[0]) == "parity-agent":
			// The agent alone: the same command, flags and config.
			cmd, rest = agentcmd.New(agentcmd.Options{}), exec[1:]
		case len(exec) >= 2 && filepath.Base(exec[0]) == "parity":
			root := newRootCmd(io.Discard, io.Discard)
			var err error
			if cmd, rest, err = root.Find(exec[1:]); err != nil || cmd == root {
				t.Errorf("%s: %q is no parity command (%v)", u, exec[1:], err)
				continue
			}
		default:
			t.Errorf("%s: ExecStart %q runs neither parity nor parity-agent", u, keys["ExecStart"])
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("%s: %s refuses %q: %v", u, cmd.Name(), rest, err)
		}
		if cmd.Name() == "agent" || filepath.Base(exec[0]) == "parity-agent" {
			for k, want := range map[string]string{"KillMode": "process", "RuntimeDirectoryPreserve": "yes"} {
				if keys[k] != want {
					t.Errorf("%s: %s=%q, want %q", u, k, keys[k], want)
				}
			}
		}
	}
}

// unitKeys reads a unit file's Key=Value lines (the last one of a key wins).
func unitKeys(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			keys[k] = v
		}
	}
	return keys
}
