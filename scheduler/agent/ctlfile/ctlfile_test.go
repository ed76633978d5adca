package ctlfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadAndWrite(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 511, 512, 513, 70_000} {
		p := filepath.Join(dir, "f")
		want := strings.Repeat("x", size)
		if err := os.WriteFile(p, []byte("old content that is longer"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Write(p, want); err != nil {
			t.Fatal(err)
		}
		got, err := Read(p)
		if err != nil || string(got) != want {
			t.Errorf("size %d: read back %d bytes (%v)", size, len(got), err)
		}
	}
	missing := filepath.Join(dir, "missing")
	if _, err := Read(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Read of a missing file: %v, want ErrNotExist naming the path", err)
	}
	if err := Write(missing, "1"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Write to a missing file: %v, want ErrNotExist naming the path", err)
	}
}

func TestWriteEachWritesEveryValueInOrderThroughOneOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rules")
	if err := os.WriteFile(p, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteEach(p, "a *:* rwm\n", "c 1:3 rwm\n", "c 195:2 rw\n"); err != nil {
		t.Fatal(err)
	}
	got, err := Read(p)
	if want := "a *:* rwm\nc 1:3 rwm\nc 195:2 rw\n"; err != nil || string(got) != want {
		t.Errorf("read back %q (%v), want %q", got, err, want)
	}
	// The kernel's refusal names the value it refused: /proc/self/oom_score_adj
	// takes only numbers in [-1000, 1000].
	adj := "/proc/self/oom_score_adj"
	err = WriteEach(adj, "0", "9999")
	if err == nil || !strings.Contains(err.Error(), `"9999"`) || !strings.Contains(err.Error(), adj) {
		t.Errorf("WriteEach with a refused value: %v, want an error naming the value and the file", err)
	}
}

func TestReadValueReadsSmallAndLargeFilesWhole(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 12, 4095, 4096, 4097, 20_000} {
		p := filepath.Join(dir, "v")
		want := strings.Repeat("7", size)
		if err := os.WriteFile(p, []byte(want), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadValue(p); err != nil || string(got) != want {
			t.Errorf("size %d: read back %d bytes (%v)", size, len(got), err)
		}
	}
	// A kernel file produced by one show function.
	if b, err := ReadValue("/proc/self/oom_score_adj"); err != nil || len(strings.TrimSpace(string(b))) == 0 {
		t.Errorf("oom_score_adj: %q (%v)", b, err)
	}
	if _, err := ReadValue(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
}
