package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeanImports keeps the supervisor small: it is the parent of every
// job and lives as long as they do.
func TestLeanImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to list imports with")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		first, _, _ := strings.Cut(pkg, "/")
		switch {
		case !strings.Contains(first, "."): // the standard library
		case pkg == "github.com/parityhpc/parity/scheduler/agent/shim", pkg == "github.com/parityhpc/parity/scheduler/agent/ctlfile",
			pkg == "github.com/parityhpc/parity/cmd/parity-shim":
		case strings.HasPrefix(pkg, "golang.org/x/sys/"):
		default:
			t.Errorf("parity-shim links %s", pkg)
		}
	}
}
