package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// haLab is a one-node lab: these tests are about the controllers.
const haLab = "name: ha\nseed: 1\nnodes:\n  - names: vm-1\n    template: gpu-vm\n"

// `parity lab up --controllers 3`, in one process and as processes: the
// printed PARITY_CONTROLLER lists three controllers, `parity controller
// status` against it shows each up and exactly one leading, and the verbs
// work through the list.
func TestLabUpWithThreeControllersHasOneLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	for _, tc := range []struct {
		name  string
		extra []string
		pids  []string // the controllers' pid files (process labs)
	}{
		{name: "in-process"},
		{name: "processes", extra: []string{"--processes"}, pids: []string{"controller", "controller-2", "controller-3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			labFile := filepath.Join(tmp, "ha.yaml")
			if err := os.WriteFile(labFile, []byte(haLab), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(tmp, "lab")
			up := parityChild(t, append([]string{"lab", "up", labFile, "--controllers", "3", "--dir", dir}, tc.extra...)...)
			env, stderr := startLabChild(t, up, "Lab ha is up")
			defer up.Process.Kill()
			addrs := strings.Split(env["PARITY_CONTROLLER"], ",")
			if len(addrs) != 3 {
				t.Fatalf("PARITY_CONTROLLER=%q; want three controllers", env["PARITY_CONTROLLER"])
			}
			pids := daemonPids(t, dir)
			for _, name := range tc.pids {
				if pids[name] == 0 || !procAlive(pids[name]) {
					t.Errorf("no live %s process (pid files %v)", name, pids)
				}
			}
			var out, errOut bytes.Buffer
			code := runWithLabVerbs(context.Background(), []string{"controller", "status", "--controller", env["PARITY_CONTROLLER"], "--token", env["PARITY_TOKEN"]}, &out, &errOut)
			if code != 0 {
				t.Fatalf("controller status: exit %d\n%s%s", code, out.String(), errOut.String())
			}
			leaders := 0
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
				f := strings.Fields(line)
				switch {
				case len(f) < 3 || f[1] == "DOWN":
					t.Errorf("controller status row %q: want every controller up", line)
				case f[1] == "Leader" && f[2] == "yes":
					leaders++
				}
			}
			if leaders != 1 {
				t.Errorf("controller status shows %d serving leaders, want 1:\n%s", leaders, out.String())
			}
			out.Reset()
			code = runWithLabVerbs(context.Background(), []string{"nodes", "--controller", env["PARITY_CONTROLLER"], "--token", env["PARITY_TOKEN"]}, &out, &errOut)
			if code != 0 || !strings.Contains(out.String(), "vm-1") {
				t.Errorf("parity nodes through the list: exit %d\n%s%s", code, out.String(), errOut.String())
			}
			if code := runWithLabVerbs(context.Background(), []string{"lab", "down", "--dir", dir}, &out, &errOut); code != 0 {
				t.Fatalf("lab down: exit %d\n%s%s", code, out.String(), errOut.String())
			}
			if err := up.Wait(); err != nil {
				t.Errorf("lab up exited with %v\n%s", err, stderr.String())
			}
			for name, pid := range pids {
				if procAlive(pid) {
					t.Errorf("%s (pid %d) still runs after lab down", name, pid)
				}
			}
		})
	}
}
