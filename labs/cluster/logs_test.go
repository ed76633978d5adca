package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRemoveKeepingLogs: the lab's state goes, its logs stay as they
// were; a lab without logs (an empty logs folder is none) leaves nothing,
// not even its directory.
func TestRemoveKeepingLogs(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string // relative path → content; "/" ends an empty folder
		kept  []string
	}{
		{"logs kept", map[string]string{
			"lab.log": "lab up said\n", "logs/controller.log": "controller said\n", "logs/h100-1.log": "agent said\n",
			"lab.pid": "1\n", "cluster.yaml": "x", "state/jobs.db": "x", "nodes/h100-1/root/dev/nvidia0": "",
			"tokens/root": "t", "work/slurm-1.out": "out", "run/controller.pid": "2\n", "logs.txt": "not a log",
		}, []string{"lab.log", "logs"}},
		{"no logs", map[string]string{"lab.pid": "1\n", "state/jobs.db": "x"}, nil},
		{"empty logs folder", map[string]string{"state/jobs.db": "x", "logs/": ""}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "lab")
			var logs []string
			for rel, content := range c.files {
				p := filepath.Join(dir, rel)
				if strings.HasSuffix(rel, "/") {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				if rel == "lab.log" || strings.HasPrefix(rel, LogsDir+"/") {
					logs = append(logs, rel)
				}
			}
			kept, err := RemoveKeepingLogs(dir)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, k := range c.kept {
				want = append(want, filepath.Join(dir, k))
			}
			if !slices.Equal(kept, want) {
				t.Errorf("kept %v, want %v", kept, want)
			}
			if len(want) == 0 {
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("the lab directory without logs is still there: %v", err)
				}
				return
			}
			var left []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					left = append(left, rel)
					if b, _ := os.ReadFile(p); string(b) != c.files[rel] {
						t.Errorf("%s holds %q, want %q", rel, b, c.files[rel])
					}
				}
				return nil
			})
			slices.Sort(logs)
			if !slices.Equal(left, logs) {
				t.Errorf("left %v, want only the logs %v", left, logs)
			}
		})
	}
}
