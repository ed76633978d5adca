package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
)

func TestDeviceRulesDenyFirstThenAllow(t *testing.T) {
	files := []gres.DeviceFile{
		{Path: "/dev/nvidia2", Major: 195, Minor: 2}, {Path: "/dev/nvidiactl", Major: 195, Minor: 255},
		{Path: "/lab/dev/nvidia2", Major: 195, Minor: 2}, // same numbers under another root: one rule
		{Path: "/dev/kfd", Major: 511, Minor: 0},
	}
	rules := DeviceRules(files)
	if rules[0].String() != "deny a *:* rwm" {
		t.Fatalf("first rule %q, want the default deny", rules[0])
	}
	var got []string
	for _, r := range rules[1+len(basicDevices):] {
		got = append(got, r.String())
	}
	want := []string{"allow c 195:2 rw", "allow c 195:255 rw", "allow c 511:0 rw"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("device allows %v, want %v", got, want)
	}
	for _, r := range rules[1:] {
		if !r.Allow {
			t.Errorf("a deny after the default deny: %s (v1 would ignore it, v2 would narrow)", r)
		}
	}
	if len(DeviceRules(nil)) != 1+len(basicDevices) {
		t.Error("a job without devices does not get exactly the basic pseudo-devices")
	}
}

// v1 groups write their own files (v1_test.go checks them on the host);
// v2 goes through containerd's cgroup2, whose shape is checked here.
func TestResourceTranslation(t *testing.T) {
	r := Resources{CPUs: topology.NewCPUSet(0, 2, 3), Mems: "0", MemoryLimit: 64 << 20, PidsLimit: 100,
		Devices: DeviceRules([]gres.DeviceFile{{Path: "/dev/nvidia0", Major: 195}})}
	v2 := r.V2()
	if v2.CPU.Cpus != "0,2-3" || *v2.Memory.Max != 64<<20 || *v2.Memory.Swap != 0 || v2.Pids.Max != 100 {
		t.Errorf("v2 resources cpu %+v mem %+v", v2.CPU, v2.Memory)
	}
	for i, d := range v2.Devices {
		// cgroup2's filter compiler dereferences both numbers.
		if d.Major == nil || d.Minor == nil {
			t.Fatalf("v2 device rule %d has a nil number", i)
		}
	}
	if *v2.Devices[0].Major != -1 || v2.Devices[0].Allow || v2.Devices[0].Type != "a" {
		t.Errorf("v2 first rule %+v, want deny a -1:-1", v2.Devices[0])
	}
	empty := Resources{}
	if e2 := empty.V2(); e2.CPU != nil || e2.Memory != nil || e2.Pids != nil || len(e2.Devices) != 0 {
		t.Errorf("empty resources set controls on v2: %+v", e2)
	}
}

func TestResourcesValidate(t *testing.T) {
	cases := []struct {
		r    Resources
		want string
	}{
		{Resources{MemoryLimit: -1}, "memory limit -1"},
		{Resources{PidsLimit: -2}, "pids limit -2"},
		{Resources{Devices: []Rule{{Type: 'x', Access: "r"}}}, `type 'x'`},
		{Resources{Devices: []Rule{{Type: 'c', Major: 1, Minor: 3}}}, "no access"},
	}
	for _, c := range cases {
		if err := c.r.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want %q", c.r, err, c.want)
		}
	}
	if err := (Resources{Devices: DeviceRules(nil)}).Validate(); err != nil {
		t.Errorf("default rules rejected: %v", err)
	}
}

func TestMapCPUs(t *testing.T) {
	host := topology.NewCPUSet(0, 1, 4, 5)
	cases := []struct {
		alloc, want topology.CPUSet
		mapped      bool
	}{
		{topology.NewCPUSet(1, 4), topology.NewCPUSet(1, 4), false},
		{topology.CPUSet{}, topology.CPUSet{}, false},
		{topology.CPURange(64, 67), host, true},                 // 64..67 mod 4 → every host CPU
		{topology.NewCPUSet(2, 6), topology.NewCPUSet(4), true}, // 2 and 6 both fold onto the third host CPU
		{topology.NewCPUSet(1, 9), topology.NewCPUSet(1), true}, // one CPU off the host folds the whole set
		{topology.CPURange(0, 223), host, true},                 // a whole simulated node
	}
	for _, c := range cases {
		m := MapCPUs(c.alloc, host)
		if !m.Host.Equal(c.want) || m.Mapped != c.mapped || !m.Allocated.Equal(c.alloc) {
			t.Errorf("MapCPUs(%s) = %+v, want %s mapped=%v", c.alloc, m, c.want, c.mapped)
		}
		if again := MapCPUs(c.alloc, host); !again.Host.Equal(m.Host) {
			t.Errorf("MapCPUs(%s) is not deterministic", c.alloc)
		}
		if m.Mapped && !strings.Contains(m.String(), "mapped onto host cpus "+c.want.String()) {
			t.Errorf("mapping says %q", m.String())
		}
	}
}

func TestReadCounter(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("usage", "12345\n")
	max := write("max", "max\n")
	kv := write("oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
	cases := []struct {
		path, key string
		want      uint64
		ok        bool
	}{
		{plain, "", 12345, true},
		{max, "", ^uint64(0), true},
		{kv, "oom_kill", 3, true},
		{kv, "absent", 0, false},
		{filepath.Join(dir, "missing"), "", 0, false},
	}
	for _, c := range cases {
		got, ok := readCounter(c.path, c.key)
		if got != c.want || ok != c.ok {
			t.Errorf("readCounter(%s, %q) = %d, %v; want %d, %v", filepath.Base(c.path), c.key, got, ok, c.want, c.ok)
		}
	}
	var st Stats
	st.read(filepath.Join(dir, "missing"), "oom_kill")
	if fmt.Sprint(st.Missing) != "[missing:oom_kill]" {
		t.Errorf("Missing = %v", st.Missing)
	}
}
