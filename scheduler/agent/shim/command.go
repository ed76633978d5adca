package shim

import (
	"os"
	"path/filepath"
)

// BinaryName is the dedicated shim binary (cmd/parity-shim), installed
// beside the parity binary.
const BinaryName = "parity-shim"

// Command is the command line that runs Main for a job: the dedicated
// shim binary when it sits beside exe (it starts in a few milliseconds and
// a few MB, where a re-exec of the multi-call binary costs tens of
// milliseconds of CPU and tens of MB per job), else exe with fallback
// (e.g. "agent", "shim"), so a lone binary still works.
func Command(exe string, fallback ...string) []string {
	p := filepath.Join(filepath.Dir(exe), BinaryName)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return []string{p}
	}
	return append([]string{exe}, fallback...)
}
