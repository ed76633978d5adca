package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/labs/cluster"
)

// TestLabUpProcessesRunsJobsAndLabDownLeavesNothing starts a process lab:
// the controller and every agent are processes of their own. A GPU job
// submitted with the ordinary verb completes with its devices; a job still
// running at lab down is stopped with the daemons, and neither a process
// nor a cgroup of the lab remains.
func TestLabUpProcessesRunsJobsAndLabDownLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab of nine processes")
	}
	if os.Geteuid() != 0 {
		t.Skip("jobs run as root, the lab's exported identity")
	}
	dir := filepath.Join(t.TempDir(), "lab")
	up := exec.Command(leanLabBinaries(t), "lab", "up", "default", "--processes", "--dir", dir)
	env, stderr := startLabChild(t, up, "Lab default is up")
	defer up.Process.Kill()

	pids := daemonPids(t, dir)
	if len(pids) != 9 || pids["controller"] == 0 || pids["agent-h100-1"] == 0 || pids["agent-h100-1-mig"] == 0 || pids["agent-cpu-2"] == 0 {
		t.Fatalf("pid files %v; want the controller and eight agents", pids)
	}
	for name, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		argv := strings.Split(string(cmdline), "\x00")
		verb := strings.SplitN(name, "-", 2)[0]
		// CPU-only nodes run the lean agent over a config file; the GPU
		// nodes' simulators live in `parity agent`.
		want := "parity " + verb
		if strings.HasPrefix(name, "agent-cpu-") {
			want = cluster.LeanAgent
		}
		runs := "parity " + argv[min(1, len(argv)-1)]
		if filepath.Base(argv[0]) == cluster.LeanAgent {
			runs = cluster.LeanAgent
		}
		if pid == up.Process.Pid || !procAlive(pid) || runs != want || (want == cluster.LeanAgent && !slices.Contains(argv, "--config")) {
			t.Errorf("%s: pid %d (lab %d) runs %q; want a live `%s` of its own", name, pid, up.Process.Pid, cmdline, want)
		}
	}

	parity := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		// Parity's own flags go before a script, as submit requires.
		args = append([]string{args[0], "--controller", env["PARITY_CONTROLLER"], "--token", env["PARITY_TOKEN"]}, args[1:]...)
		if code := runWithLabVerbs(context.Background(), args, &out, &errOut); code != 0 {
			t.Fatalf("parity %q: exit %d\n%s%s", args, code, out.String(), errOut.String())
		}
		return out.String()
	}
	outside := t.TempDir()
	script := filepath.Join(outside, "gpu.sh")
	body := "#!/bin/sh\n#SBATCH --gres=gpu:h100:2\n#SBATCH -o " + filepath.Join(outside, "gpu.out") + "\nenv | grep -E '^(CUDA_VISIBLE_DEVICES|SLURMD_NODENAME)=' | sort\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	parity("submit", "--wait", script)
	// A job on a parity-agent node.
	cpuOut := filepath.Join(outside, "cpu.out")
	parity("submit", "--wait", "--partition=cpu", "-o", cpuOut, "--wrap", "echo $SLURMD_NODENAME")
	if out, err := os.ReadFile(cpuOut); err != nil || !strings.HasPrefix(string(out), "cpu-") {
		t.Errorf("the CPU job wrote %q (%v); want it run on a cpu node, by parity-agent", out, err)
	}
	out, err := os.ReadFile(filepath.Join(outside, "gpu.out"))
	if err != nil || !strings.Contains(string(out), "CUDA_VISIBLE_DEVICES=0,1\n") || !strings.Contains(string(out), "SLURMD_NODENAME=h100-") {
		t.Errorf("the GPU job wrote %q (%v); want CUDA_VISIBLE_DEVICES=0,1 on an h100 node", out, err)
	}

	// A job still running at lab down must not outlive the lab.
	sleeper := filepath.Join(outside, "sleeper.pid")
	id := strings.TrimSpace(parity("submit", "--parsable", "--gres=gpu:mi300x:1", "-o", "/dev/null",
		"--wrap", "echo $$ > "+sleeper+"; exec sleep 600"))
	jobPid := waitForPidFile(t, sleeper)
	if !procAlive(jobPid) {
		t.Fatalf("job %s's process %d is not running", id, jobPid)
	}

	var downOut, downErr bytes.Buffer
	if code := runWithLabVerbs(context.Background(), []string{"lab", "down", "--dir", dir}, &downOut, &downErr); code != 0 {
		t.Fatalf("lab down: exit %d\n%s%s", code, downOut.String(), downErr.String())
	}
	if err := up.Wait(); err != nil {
		t.Errorf("lab up exited with %v\n%s", err, stderr.String())
	}
	for name, pid := range pids {
		if procAlive(pid) {
			t.Errorf("%s (pid %d) still runs after lab down", name, pid)
		}
	}
	if procAlive(jobPid) {
		t.Errorf("job %s's process %d still runs after lab down", id, jobPid)
	}
	root, err := cluster.CgroupRoot("default", dir)
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", root)); len(left) > 0 {
		t.Errorf("the lab's cgroups remain: %v", left)
	}
	onlyLogsLeft(t, dir, downOut.String(), "lab.log", "logs")
	if _, err := os.Stat(filepath.Join(dir, "logs", "controller.log")); err != nil {
		t.Errorf("the controller's log after lab down: %v", err)
	}
}

// leanLabBinaries copies the test binary as parity and, beside it,
// parity-agent (TestMain runs the agent command alone under that name), as
// `make build` lays them out, and returns the parity copy's path.
func leanLabBinaries(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"parity", cluster.LeanAgent} {
		dst := filepath.Join(dir, name)
		if err := os.Link(exe, dst); err == nil {
			continue
		}
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "parity")
}

// startLabChild starts `parity lab up`, reads its output until the line
// starting with ready, and returns the variables of its export line.
func startLabChild(t *testing.T, up *exec.Cmd, ready string) (map[string]string, *bytes.Buffer) {
	t.Helper()
	stdout, err := up.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	up.Stderr = &stderr
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	var export string
	var printed []string
	for lines.Scan() {
		printed = append(printed, lines.Text())
		if strings.HasPrefix(lines.Text(), "export ") {
			export = lines.Text()
		}
		if strings.HasPrefix(lines.Text(), ready) {
			break
		}
	}
	if export == "" {
		up.Process.Kill()
		t.Fatalf("lab up printed no export line:\n%s\nstderr:\n%s", strings.Join(printed, "\n"), stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }() // the lab keeps printing until it stops
	env := map[string]string{}
	for _, kv := range strings.Fields(strings.TrimPrefix(export, "export ")) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env, &stderr
}

// waitForPidFile polls for a file holding a pid, for up to a minute.
func waitForPidFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return pid
		}
		time.Sleep(50 * time.Millisecond) // polling a file another process writes
	}
	t.Fatalf("no pid in %s within a minute", path)
	return 0
}

// daemonPids reads a process lab's pid files: daemon name to pid.
func daemonPids(t *testing.T, dir string) map[string]int {
	t.Helper()
	pids := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "run", "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
	}
	return pids
}
