package shim

import (
	"os"
	"path/filepath"
)

// BinaryName is the dedicated shim binary (cmd/parity-shim), installed
// beside the parity binary.
const BinaryName = "parity-shim"

// Command is the command line that runs Main: the dedicated shim binary
// when it sits beside exe (a few MB, where the multi-call binary holds
// tens), else exe with fallback (e.g. "agent", "shim"), so a lone binary
// still works.
func Command(exe string, fallback ...string) []string {
	p := filepath.Join(filepath.Dir(exe), BinaryName)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return []string{p}
	}
	return append([]string{exe}, fallback...)
}
