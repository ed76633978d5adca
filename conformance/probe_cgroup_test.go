package conformance

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadCgroup(t *testing.T) {
	tests := []struct {
		name    string
		proc    string
		files   map[string]map[string]string // group path → file → content
		unified string
		want    map[string]map[string]string
	}{
		{name: "v2, a step under its job", proc: "0::/parity/n1/job_7/step_0\n", unified: "/parity/n1/job_7/step_0",
			files: map[string]map[string]string{
				"/parity/n1/job_7":        {"memory.max": "268435456\n", "cpuset.cpus.effective": "0-3\n"},
				"/parity/n1/job_7/step_0": {"cpuset.cpus.effective": "1\n"},
				"/parity/n1":              {"memory.max": "max"},
			},
			want: map[string]map[string]string{
				"/parity/n1/job_7":        {"memory.max": "268435456", "cpuset.cpus.effective": "0-3"},
				"/parity/n1/job_7/step_0": {"cpuset.cpus.effective": "1"},
			}},
		{name: "v2, not in the job's group", proc: "0::/other/leaf\n", unified: "/other/leaf",
			files: map[string]map[string]string{"/other/leaf": {"memory.max": "max"}, "/other": {"memory.max": "1"}},
			want:  map[string]map[string]string{"/other/leaf": {"memory.max": "max"}}},
		{name: "hybrid", proc: "5:devices:/parity/n1/job_7\n4:memory:/parity/n1/job_7\n0::/\n"},
		{name: "legacy", proc: "4:memory:/parity/n1/job_7\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			proc := filepath.Join(dir, "cgroup")
			if err := os.WriteFile(proc, []byte(tt.proc), 0o644); err != nil {
				t.Fatal(err)
			}
			mount := filepath.Join(dir, "mnt")
			for g, files := range tt.files {
				if err := os.MkdirAll(filepath.Join(mount, g), 0o755); err != nil {
					t.Fatal(err)
				}
				for n, v := range files {
					if err := os.WriteFile(filepath.Join(mount, g, n), []byte(v), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			rep, err := readCgroup(proc, mount, "7")
			if err != nil {
				t.Fatal(err)
			}
			if rep.Unified != tt.unified || !maps.EqualFunc(rep.Groups, tt.want, maps.Equal) {
				t.Errorf("readCgroup = unified %q groups %v, want %q %v", rep.Unified, rep.Groups, tt.unified, tt.want)
			}
			if len(rep.Lines) != len(strings.Split(strings.TrimSpace(tt.proc), "\n")) {
				t.Errorf("lines %v from %q", rep.Lines, tt.proc)
			}
		})
	}
}

func TestStepNesting(t *testing.T) {
	groups := func(job, step string) map[string]map[string]string {
		return map[string]map[string]string{"/p/n1/job_7": {"cpuset.cpus.effective": job}, "/p/n1/job_7/step_2": {"cpuset.cpus.effective": step}}
	}
	tests := []struct {
		name string
		rep  CgroupReport
		bad  bool
	}{
		{"nested, CPUs within", CgroupReport{Unified: "/p/n1/job_7/step_2", Groups: groups("0-3", "1")}, false},
		{"a task under the step", CgroupReport{Unified: "/p/n1/job_7/step_2/task_0", Groups: groups("0-3", "1-2")}, false},
		{"CPUs outside the job's", CgroupReport{Unified: "/p/n1/job_7/step_2", Groups: groups("0-3", "3-4")}, true},
		{"another step's group", CgroupReport{Unified: "/p/n1/job_7/step_20", Groups: groups("0-3", "1")}, true},
		{"beside the job", CgroupReport{Unified: "/p/n1/step_2", Groups: map[string]map[string]string{"/p/n1/step_2": {}}}, true},
		{"no CPUs read", CgroupReport{Unified: "/p/n1/job_7/step_2", Groups: groups("0-3", "")}, true},
	}
	for _, tt := range tests {
		if got := stepNesting(tt.rep, 7, 2); (len(got) > 0) != tt.bad {
			t.Errorf("%s: stepNesting = %v, want problems %v", tt.name, got, tt.bad)
		}
	}
}
