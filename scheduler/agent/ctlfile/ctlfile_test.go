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
