package nodecheck

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestChecks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	meminfo := write("meminfo", "MemTotal:       16384000 kB\nMemFree:         1000 kB\nMemAvailable:    2097152 kB\n", 0o644)
	noAvail := write("meminfo-old", "MemTotal: 1 kB\n", 0o644)
	ok := write("ok.sh", "#!/bin/sh\necho all good\n", 0o755)
	bad := write("bad.sh", "#!/bin/sh\necho 'ERROR: /scratch not mounted'\necho more\nexit 1\n", 0o755)
	slow := write("slow.sh", "#!/bin/sh\nsleep 30 &\nwait\n", 0o755)
	tests := []struct {
		name     string
		check    Check
		passed   bool
		wantText string
	}{
		{"disk with room", DiskFree{Path: dir, MinFreeBytes: 1}, true, dir},
		{"disk below bytes", DiskFree{Path: dir, MinFreeBytes: 1 << 62}, false, "below"},
		{"disk below percent", DiskFree{Path: dir, MinFreePct: 100.1}, false, "below 100.1%"},
		{"disk missing", DiskFree{Path: filepath.Join(dir, "nope")}, false, "statfs"},
		{"memory enough", Memory{MemInfo: meminfo, MinAvailableBytes: 1 << 30}, true, "2.0 GiB available"},
		{"memory short", Memory{MemInfo: meminfo, MinAvailableBytes: 4 << 30}, false, "below 4.0 GiB"},
		{"memory unreadable", Memory{MemInfo: noAvail}, false, "no MemAvailable"},
		{"script passes", Script{Path: ok}, true, "all good"},
		{"script fails with its first line", Script{Path: bad}, false, "ERROR: /scratch not mounted"},
		{"script times out", Script{Path: slow, Timeout: 200 * time.Millisecond}, false, "timed out after 200ms"},
		{"script missing", Script{Path: filepath.Join(dir, "nope.sh")}, false, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			passed, msg := tc.check.Run(context.Background())
			if passed != tc.passed || !strings.Contains(msg, tc.wantText) {
				t.Fatalf("Run = %v %q, want %v and %q", passed, msg, tc.passed, tc.wantText)
			}
			if time.Since(start) > 10*time.Second {
				t.Fatalf("check took %v", time.Since(start))
			}
		})
	}
}

func TestRunAllStampsEveryResult(t *testing.T) {
	at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	got := RunAll(context.Background(), []Check{DiskFree{Path: dir}, DiskFree{Path: dir, MinFreeBytes: 1 << 62}}, func() time.Time { return at })
	if len(got) != 2 || got[0].Name != "disk:"+dir || !got[0].Passed || got[1].Passed || !got[1].Time.Equal(at) {
		t.Fatalf("RunAll = %+v", got)
	}
}
