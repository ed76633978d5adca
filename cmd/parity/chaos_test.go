package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestChaosSmoke runs two scenarios of `parity chaos` at their smallest
// on process labs of this test binary's daemons: one controller kill -9
// during a submission stream must lose, reuse and double-book nothing,
// and no bad input may be accepted or crash the controller. The rest (the
// authorisation matrix's CLI cells alone take half a minute under the
// race detector), twenty kills, load and outages, is `make chaos`.
func TestChaosSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts process labs")
	}
	if os.Geteuid() != 0 {
		t.Skip("labs need root")
	}
	dir := filepath.Join(t.TempDir(), "chaos")
	var out, errOut bytes.Buffer
	code := runWithLabVerbs(context.Background(), []string{"chaos", "--only", "kill,input", "--trials", "1", "--dir", dir}, &out, &errOut)
	t.Logf("parity chaos:\n%s", out.String())
	if code != 0 {
		t.Fatalf("parity chaos: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"accepted 0 · crashes 0", "lost 0 · reused 0 · double-allocated 0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q", want)
		}
	}
	if !regexp.MustCompile(`acknowledged [1-9]`).MatchString(out.String()) {
		t.Error("the kill trial acknowledged no submission: it tested nothing")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("--dir %s: %v; a run given --dir keeps it", dir, err)
	}
}
