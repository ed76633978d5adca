package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/labfile"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
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

// A controller count no majority works with is refused before anything
// starts, naming the flag and the value.
func TestControllerCountsOtherThanOneThreeFiveAreRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lab")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lab", "up", "default", "--controllers", "2", "--dir", dir}, "--controllers=2"},
		{[]string{"conform", "--controllers", "4", "--out", filepath.Join(dir, "report")}, "--controllers=4"},
	} {
		args := tc.args
		var out, errOut bytes.Buffer
		code := runWithLabVerbs(context.Background(), args, &out, &errOut)
		said := out.String() + errOut.String()
		if code != 1 || !strings.Contains(said, tc.want) {
			t.Errorf("parity %v: exit %d, said %q; want a usage error naming --controllers", args, code, said)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("parity %v left %s: %v", args, dir, err)
		}
	}
}

// In a process lab of three controllers, the leader killed with SIGKILL
// leaves a group that elects another and acknowledges through the same
// list, and the killed one, restarted on its port and state, follows it.
func TestProcessLabSurvivesItsLeaderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab of four processes")
	}
	lab, err := labfile.Parse("ha.yaml", []byte(haLab))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := cluster.UpProcesses(ctx, cluster.ProcOptions{Lab: lab, Dir: t.TempDir(), Exe: exe, Controllers: 3, NoIsolation: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Down(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
	}()
	leader, err := p.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := daemonPids(t, p.Dir)
	cl, err := p.Client(ctx, "root")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	spec := &pb.JobSpec{Name: "held", Partition: "all", Nodes: 1, Ntasks: 1, CpusPerTask: 1, Script: "#!/bin/sh\ntrue\n", Hold: true}
	first, err := cl.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.StopController(ctx, leader); err != nil {
		t.Fatal(err)
	}
	for name, id := range pid {
		if strings.HasPrefix(name, "controller") && !procAlive(id) {
			if left := daemonPids(t, p.Dir); left[name] != 0 {
				t.Errorf("the killed %s still has its pid file", name)
			}
		}
	}
	second, err := cl.Submit(ctx, spec)
	if err != nil || second <= first {
		t.Fatalf("submit after the leader was killed: job %d, %v (the first was %d)", second, err, first)
	}
	next, err := p.Leader(ctx)
	if err != nil || next == leader {
		t.Fatalf("leader after the kill: %q, %v; want another than %s", next, err, leader)
	}
	if err := p.RestartController(ctx, leader); err != nil {
		t.Fatal(err)
	}
	if j, err := cl.GetJob(ctx, first, false); err != nil || j.GetId() != first {
		t.Errorf("job %d from before the kill: %v, %v", first, j, err)
	}
}
