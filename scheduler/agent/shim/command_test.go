package shim

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCommandPrefersTheShimBinaryBesideExe(t *testing.T) {
	cases := []struct {
		name  string
		shim  *os.FileMode // nil: no parity-shim beside exe
		isDir bool
		want  func(dir string) []string
	}{
		{"absent", nil, false, func(d string) []string { return []string{filepath.Join(d, "parity"), "agent", "shim"} }},
		{"executable", ptr(os.FileMode(0o755)), false, func(d string) []string { return []string{filepath.Join(d, BinaryName)} }},
		{"not executable", ptr(os.FileMode(0o644)), false, func(d string) []string { return []string{filepath.Join(d, "parity"), "agent", "shim"} }},
		{"a directory", nil, true, func(d string) []string { return []string{filepath.Join(d, "parity"), "agent", "shim"} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "parity")
			if c.shim != nil {
				if err := os.WriteFile(filepath.Join(dir, BinaryName), []byte("#!/bin/sh\n"), *c.shim); err != nil {
					t.Fatal(err)
				}
			}
			if c.isDir {
				if err := os.Mkdir(filepath.Join(dir, BinaryName), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := Command(exe, "agent", "shim"), c.want(dir); !slices.Equal(got, want) {
				t.Errorf("Command = %q, want %q", got, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestRotateLogKeepsOneOldLogPastTheLimit(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "shim.log")
	if err := os.WriteFile(log, []byte("small"), 0o600); err != nil {
		t.Fatal(err)
	}
	rotateLog(log, 10)
	if b, _ := os.ReadFile(log); string(b) != "small" {
		t.Fatalf("a log under the limit was moved: %q", b)
	}
	if err := os.WriteFile(log, []byte("0123456789 and more"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(log+".1", []byte("older"), 0o600)
	rotateLog(log, 10)
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Errorf("a log past the limit is still there (%v)", err)
	}
	if b, _ := os.ReadFile(log + ".1"); string(b) != "0123456789 and more" {
		t.Errorf("rotated log holds %q, want the last one", b)
	}
	rotateLog(filepath.Join(dir, "missing.log"), 10) // nothing to do, no panic
}
