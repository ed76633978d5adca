package replay

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedTracePath finds a file of the shared trace collection, which lives
// in ../shared/data/traces beside the module root (CI keeps a copy there),
// and skips loudly when it is absent.
func sharedTracePath(tb testing.TB, name string) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "data", "traces", name)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("SKIPPING: shared trace %s is absent (%v); the real-trace faithfulness checks did not run", p, err)
	}
	return p
}
