package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parityhpc/parity/labs/cluster"
)

// TestLabUpServesVerbsAndLabDownStopsIt starts `parity lab up` as a child,
// lists its nodes with the ordinary verb and the printed token, then stops
// it with `parity lab down`, which waits for the lab to clean up.
func TestLabUpServesVerbsAndLabDownStopsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	dir := filepath.Join(t.TempDir(), "lab")
	up := parityChild(t, "lab", "up", "default", "--dir", dir)
	stdout, err := up.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	up.Stderr = &stderr
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	defer up.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var export string
	var printed []string
	for lines.Scan() {
		printed = append(printed, lines.Text())
		if strings.HasPrefix(lines.Text(), "export ") {
			export = lines.Text()
		}
		if strings.HasPrefix(lines.Text(), "Lab default is up") {
			break
		}
	}
	if export == "" {
		t.Fatalf("lab up printed no export line:\n%s\nstderr:\n%s", strings.Join(printed, "\n"), stderr.String())
	}
	env := map[string]string{}
	for _, kv := range strings.Fields(strings.TrimPrefix(export, "export ")) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	// The export carries root's token: jobs run as their submitter, who
	// must exist on the nodes.
	if tok, err := os.ReadFile(filepath.Join(dir, "tokens", "root")); err != nil || strings.TrimSpace(string(tok)) != env["PARITY_TOKEN"] {
		t.Errorf("tokens/root = %q (%v), export says %q", tok, err, env["PARITY_TOKEN"])
	}
	var out, errOut bytes.Buffer
	code := runWithLabVerbs(context.Background(), []string{"nodes", "--controller", env["PARITY_CONTROLLER"], "--token", env["PARITY_TOKEN"]}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "h100-") || !strings.Contains(out.String(), "mi300x-") {
		t.Errorf("parity nodes against the lab: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := runWithLabVerbs(context.Background(), []string{"lab", "down", "--dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("lab down: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if err := up.Wait(); err != nil {
		t.Errorf("lab up exited with %v\n%s", err, stderr.String())
	}
	onlyLogsLeft(t, dir, out.String(), "lab.log")
}

// onlyLogsLeft checks that lab down left nothing of the lab in dir but
// the logs named (relative to dir, lab.log holding what the lab logged)
// and said where they are.
func onlyLogsLeft(t *testing.T, dir, said string, logs ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("lab down removed its logs with the directory: %v", err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, logs) {
		t.Errorf("lab down left %v in %s, want only the logs %v", left, dir, logs)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "lab.log")); slices.Contains(logs, "lab.log") && (err != nil || len(b) == 0) {
		t.Errorf("lab.log after lab down: %d bytes, %v", len(b), err)
	}
	for _, l := range logs {
		if !strings.Contains(said, filepath.Join(dir, l)) {
			t.Errorf("lab down said %q, which does not name the log %s", said, filepath.Join(dir, l))
		}
	}
}

// TestLabDownCleansAStaleLab gives lab down a directory whose lab was
// killed: its pid is dead and one of its cgroups remains with a process.
// A second instance of the same lab, from another directory, keeps its
// groups.
func TestLabDownCleansAStaleLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root")
	}
	name := fmt.Sprintf("stale-test-%d", os.Getpid())
	dir, otherDir := t.TempDir(), t.TempDir()
	group := func(d string) string {
		t.Helper()
		root, err := cluster.CgroupRoot(name, d)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join("/sys/fs/cgroup/pids", root, "job_1")
	}
	for _, d := range []string{dir, otherDir} {
		if err := os.MkdirAll(group(d), 0o755); err != nil {
			t.Skipf("no writable pids cgroup here: %v", err)
		}
		t.Cleanup(func() { os.Remove(group(d)); os.Remove(filepath.Dir(group(d))) })
	}
	leftover := exec.Command("cat") // waits on its stdin until killed
	stdin, err := leftover.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := leftover.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(group(dir), "cgroup.procs"), []byte(fmt.Sprint(leftover.Process.Pid)), 0o644); err != nil {
		leftover.Process.Kill()
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for f, v := range map[string]string{labPidFile: fmt.Sprint(deadPid(t)), labNameFile: name, labLogFile: "the lab said",
		"logs/h100-1.log": "the agent said", "cluster.yaml": "state"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if code := runWithLabVerbs(context.Background(), []string{"lab", "down", "--dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("lab down: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if err := leftover.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the process left in the lab's cgroup ended with %v, want killed", err)
	}
	if _, err := os.Stat(filepath.Dir(group(dir))); !os.IsNotExist(err) {
		t.Errorf("cgroup %s still there: %v", filepath.Dir(group(dir)), err)
	}
	if _, err := os.Stat(group(otherDir)); err != nil {
		t.Errorf("lab down removed the other instance's cgroup %s: %v", group(otherDir), err)
	}
	onlyLogsLeft(t, dir, out.String(), "lab.log", "logs")
	if b, err := os.ReadFile(filepath.Join(dir, "logs", "h100-1.log")); string(b) != "the agent said\n" {
		t.Errorf("the agent's log after lab down: %q, %v", b, err)
	}
	// Run again on what is left: no lab there, and the logs stay.
	out.Reset()
	if code := runWithLabVerbs(context.Background(), []string{"lab", "down", "--dir", dir}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "No lab in") {
		t.Errorf("lab down over the logs alone: exit %d, said %q", code, out.String())
	}
	onlyLogsLeft(t, dir, out.String(), "lab.log", "logs")
}

// deadPid returns the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestLabDownStopsTheDaemonsOfAKilledProcessLab kills a process lab's
// parent outright: its daemons keep running, and lab down finds and stops
// them by their pid files.
func TestLabDownStopsTheDaemonsOfAKilledProcessLab(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab of nine processes")
	}
	dir := filepath.Join(t.TempDir(), "lab")
	up := parityChild(t, "lab", "up", "default", "--processes", "--dir", dir)
	startLabChild(t, up, "Lab default is up")
	pids := daemonPids(t, dir)
	if len(pids) != 9 {
		t.Fatalf("pid files %v; want nine daemons", pids)
	}
	up.Process.Kill()
	up.Wait()
	for name, pid := range pids {
		if !procAlive(pid) {
			t.Fatalf("%s (pid %d) died with its parent; this test needs orphans", name, pid)
		}
	}
	var out, errOut bytes.Buffer
	if code := runWithLabVerbs(context.Background(), []string{"lab", "down", "--dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("lab down: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "Stopping controller") {
		t.Errorf("lab down said:\n%s\nwant it to name the daemons it stops", out.String())
	}
	for name, pid := range pids {
		if procAlive(pid) {
			t.Errorf("%s (pid %d) still runs after lab down", name, pid)
		}
	}
	onlyLogsLeft(t, dir, out.String(), "lab.log", "logs")
}
