package launch

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/topology"
)

func TestCPUsBeyondTheHostAreMappedOntoIt(t *testing.T) {
	mgr := requireCgroups(t)
	host, err := cgroup.HostCPUs(mgr)
	if err != nil || host.Count() < 1 {
		t.Fatalf("host CPUs %s: %v", host, err)
	}
	first := host.List()[0]
	e := newEnv(t, mgr, func(c *Config) { c.HostCPUs = host })
	cases := []struct {
		name   string
		alloc  topology.CPUSet
		want   topology.CPUSet
		mapped bool
	}{
		{"a host CPU is used as is", topology.NewCPUSet(first), topology.NewCPUSet(first), false},
		// A simulated 224-CPU node's CPUs 64-71 land on the host's CPUs.
		{"virtual CPUs fold onto the host", topology.CPURange(64, 71), foldOnto(topology.CPURange(64, 71), host), true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := uint64(500 + i)
			s := e.spec(id, "grep Cpus_allowed_list /proc/self/status\n")
			s.CPUs = c.alloc
			e.launch(s)
			end := e.waitEnd()
			if end.State != accounting.StateCompleted {
				t.Fatalf("job ended %s: %s", end.State, end.Reason)
			}
			if end.CPUs.Mapped != c.mapped || !end.CPUs.Host.Equal(c.want) || !end.CPUs.Allocated.Equal(c.alloc) {
				t.Errorf("job record cpus %+v, want allocated %s on host %s (mapped %v)", end.CPUs, c.alloc, c.want, c.mapped)
			}
			out := readFile(t, filepath.Join(e.work, fmt.Sprintf("slurm-%d.out", id)))
			_, list, _ := strings.Cut(strings.TrimSpace(out), ":")
			got, err := topology.ParseCPUList(strings.TrimSpace(list))
			if err != nil || !got.Equal(c.want) {
				t.Errorf("job ran on CPUs %q, want %s", out, c.want)
			}
		})
	}
}

// foldOnto is the mapping rule restated: virtual id i runs on the host's
// (i mod n)-th CPU.
func foldOnto(alloc, host topology.CPUSet) topology.CPUSet {
	hs := host.List()
	var out []int
	for _, c := range alloc.List() {
		out = append(out, hs[c%len(hs)])
	}
	return topology.NewCPUSet(out...)
}

func TestWithoutCgroupsJobsRunAndCancelKillsTheProcessGroup(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, nil, nil)
	e.launch(e.spec(600, "exit 4"))
	if end := e.waitEnd(); end.State != accounting.StateFailed || end.ExitString() != "4:0" || end.Isolated {
		t.Fatalf("job ended %+v, want FAILED 4:0 without isolation", end)
	}
	ready := e.fifo("ready")
	s := e.spec(601, `sleep 1001 & echo $! > "$W/pids"
echo ready > "$W/ready"
wait
`)
	s.Env["W"] = e.work
	e.launch(s)
	e.readLine(ready)
	pid := strings.TrimSpace(readFile(t, filepath.Join(e.work, "pids")))
	if err := e.rt.Cancel(context.Background(), 601); err != nil {
		t.Fatal(err)
	}
	end := e.waitEnd()
	if end.State != accounting.StateCancelled || end.ExitString() != "0:15" {
		t.Errorf("job ended %s %s, want CANCELLED 0:15", end.State, end.ExitString())
	}
	var p int
	fmt.Sscan(pid, &p)
	assertGone(t, []int{p})
}

func TestUsageAttributesGPUSamplesToTheHolder(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	_, release := e.holdJob(700, func(s *Spec) { s.GPUs = []string{"GPU-a", "GPU-b"} })
	if h := e.rt.Holders(); h["GPU-a"] != 700 || h["GPU-b"] != 700 || len(h) != 2 {
		t.Fatalf("Holders() = %v", h)
	}
	now := time.Unix(0, 0)
	e.rt.ObserveSamples([]gres.Sample{
		{UUID: "GPU-a", Time: now, UtilizationPct: 50, MemoryUsedBytes: 1 << 30},
		{UUID: "GPU-b", Time: now, UtilizationPct: 10, MemoryUsedBytes: 4 << 30},
		{UUID: "GPU-idle", Time: now, UtilizationPct: 99},
	})
	e.rt.ObserveSamples([]gres.Sample{
		{UUID: "GPU-a", Time: now.Add(time.Second), UtilizationPct: 70, MemoryUsedBytes: 3 << 30},
	})
	u, err := e.rt.Usage(700)
	if err != nil {
		t.Fatal(err)
	}
	want := []GPUUsage{
		{UUID: "GPU-a", Samples: 2, MeanUtilPct: 60, MaxUtilPct: 70, MaxMemoryBytes: 3 << 30, MeanMemoryBytes: 2 << 30},
		{UUID: "GPU-b", Samples: 1, MeanUtilPct: 10, MaxUtilPct: 10, MaxMemoryBytes: 4 << 30, MeanMemoryBytes: 4 << 30},
	}
	if fmt.Sprint(u.GPUs) != fmt.Sprint(want) {
		t.Errorf("live GPU usage %+v, want %+v", u.GPUs, want)
	}
	if u.MemoryPeakBytes == 0 {
		t.Errorf("live usage has no memory peak: %+v", u)
	}
	e.writeLine(release, "go")
	end := e.waitEnd()
	if fmt.Sprint(end.Usage.GPUs) != fmt.Sprint(want) {
		t.Errorf("final GPU usage %+v, want %+v", end.Usage.GPUs, want)
	}
	if end.Usage.CPUTime <= 0 || end.Usage.MemoryPeakBytes == 0 {
		t.Errorf("final usage lacks CPU time or memory peak: %+v", end.Usage)
	}
	if h := e.rt.Holders(); len(h) != 0 {
		t.Errorf("Holders() after the end = %v", h)
	}
}
