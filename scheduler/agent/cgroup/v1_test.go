package cgroup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parityhpc/parity/topology"
)

// TestV1GroupLifecycle covers what the launch path relies on besides
// isolation: parents made on demand (a cpuset ancestor gets its parent's
// CPUs, or nothing could join below it), Load after a restart, a Delete
// that refuses while a member remains and then removes the step with the
// job, and a Load of a deleted group that fails.
func TestV1GroupLifecycle(t *testing.T) {
	m := requireV1(t)
	root := groupName(t)
	t.Cleanup(func() {
		for _, n := range m.v1Subsystems() {
			rmdirTree(filepath.Join(m.v1Root, n, root))
		}
	})
	g, err := m.Create(root+"/node/job_1", Resources{MemoryLimit: 32 << 20, PidsLimit: 64})
	if err != nil {
		t.Fatal(err)
	}
	step, err := g.Child("step_batch", Resources{})
	if err != nil {
		t.Fatal(err)
	}
	parent, _ := os.ReadFile(filepath.Join(m.v1Root, "cpuset", "cpuset.cpus"))
	for _, p := range []string{root, root + "/node", root + "/node/job_1", root + "/node/job_1/step_batch"} {
		got, _ := os.ReadFile(filepath.Join(m.v1Root, "cpuset", p, "cpuset.cpus"))
		if strings.TrimSpace(string(got)) != strings.TrimSpace(string(parent)) {
			t.Errorf("cpuset.cpus of %s = %q, want the root's %q", p, got, parent)
		}
	}
	if m.swap {
		b, _ := os.ReadFile(filepath.Join(m.v1Root, "memory", root, "node/job_1", "memory.memsw.limit_in_bytes"))
		if strings.TrimSpace(string(b)) != strconv.Itoa(32<<20) {
			t.Errorf("memory.memsw.limit_in_bytes = %q", b)
		}
	}
	if !slices.Contains(m.missing, "pids") {
		b, _ := os.ReadFile(filepath.Join(m.v1Root, "pids", root, "node/job_1", "pids.max"))
		if strings.TrimSpace(string(b)) != "64" {
			t.Errorf("pids.max = %q, want 64", b)
		}
	}
	cmd := exec.Command("/bin/sh", "-c", "read _")
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range step.ProcsFiles() {
		if err := os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
	loaded, err := m.Load(root + "/node/job_1")
	if err != nil {
		t.Fatal(err)
	}
	if pids, err := loaded.Procs(); err != nil || len(pids) != 1 || pids[0] != cmd.Process.Pid {
		t.Errorf("members of the reloaded job group (step included): %v, %v; want [%d]", pids, err, cmd.Process.Pid)
	}
	if err := loaded.Delete(); err == nil {
		t.Error("Delete of a group with a member succeeded")
	}
	stdin.Close()
	cmd.Wait()
	if err := loaded.Delete(); err != nil {
		t.Fatalf("Delete once empty: %v", err)
	}
	for _, n := range m.v1Subsystems() {
		if _, err := os.Stat(filepath.Join(m.v1Root, n, root, "node/job_1")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s group remains after Delete: %v", n, err)
		}
	}
	if _, err := m.Load(root + "/node/job_1"); err == nil {
		t.Error("Load of a deleted group succeeded")
	}
	if err := g.Delete(); err != nil {
		t.Errorf("a second Delete: %v, want nil (already gone)", err)
	}
}

// TestV1ConcurrentFirstJobsOfANode: the first jobs of a node arrive
// together and make the node's parent groups at the same time; one that
// finds a parent another has just made (not yet given CPUs) must still get
// its cpuset.
func TestV1ConcurrentFirstJobsOfANode(t *testing.T) {
	m := requireV1(t)
	host, err := HostCPUs(m)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 40 {
		root := fmt.Sprintf("%s-%d", groupName(t), round)
		t.Cleanup(func() {
			for _, n := range m.v1Subsystems() {
				rmdirTree(filepath.Join(m.v1Root, n, root))
			}
		})
		const jobs = 32
		errs := make(chan error, jobs)
		for i := range jobs {
			go func() {
				cpu := topology.NewCPUSet(host.List()[i%host.Count()])
				_, err := m.Create(fmt.Sprintf("%s/a/b/c/node/job_%d", root, i), Resources{CPUs: cpu})
				errs <- err
			}()
		}
		// Wait for every creation before failing, so that the cleanup
		// does not race goroutines still making groups.
		var first error
		for range jobs {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		if first != nil {
			t.Fatalf("round %d: %v", round, first)
		}
	}
}

// TestV1StepStartsFromItsJobsCPUs: a job gets its own CPUs, its step
// gets them (and the memory nodes), an empty group's Kill is a no-op, and
// the final counters read.
func TestV1StepStartsFromItsJobsCPUs(t *testing.T) {
	m := requireV1(t)
	root := groupName(t)
	t.Cleanup(func() {
		for _, n := range m.v1Subsystems() {
			rmdirTree(filepath.Join(m.v1Root, n, root))
		}
	})
	host, err := HostCPUs(m)
	if err != nil {
		t.Fatal(err)
	}
	cpu := strconv.Itoa(host.List()[0])
	g, err := m.Create(root+"/node/job_2", Resources{CPUs: topology.NewCPUSet(host.List()[0])})
	if err != nil {
		t.Fatal(err)
	}
	step, err := g.Child("step_batch", Resources{})
	if err != nil {
		t.Fatal(err)
	}
	mems, _ := os.ReadFile(filepath.Join(m.v1Root, "cpuset", root, "node", "cpuset.mems"))
	for _, p := range []string{"node/job_2", "node/job_2/step_batch"} {
		cpus, _ := os.ReadFile(filepath.Join(m.v1Root, "cpuset", root, p, "cpuset.cpus"))
		got, _ := os.ReadFile(filepath.Join(m.v1Root, "cpuset", root, p, "cpuset.mems"))
		if strings.TrimSpace(string(cpus)) != cpu || strings.TrimSpace(string(got)) != strings.TrimSpace(string(mems)) {
			t.Errorf("%s: cpus %q mems %q, want %s and the node's %q", p, cpus, got, cpu, mems)
		}
	}
	if err := g.Kill(context.Background()); err != nil {
		t.Errorf("Kill of an empty group: %v", err)
	}
	if st, err := step.FinalStats(); err != nil || len(st.Missing) > 0 && !slices.Contains(m.missing, "cpuacct") {
		t.Errorf("FinalStats: %+v, %v", st, err)
	}
	for _, d := range []Group{step, g} {
		if err := d.Delete(); err != nil {
			t.Fatal(err)
		}
	}
}
