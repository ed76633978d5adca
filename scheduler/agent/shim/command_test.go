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
