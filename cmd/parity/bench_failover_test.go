package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestBenchFailoverKeepsThePromises runs the failover bench small: three
// controller processes (this test binary acting as parity), the leader
// killed with SIGKILL mid-stream twice; every acknowledged job must be on
// the new leader, none twice.
func TestBenchFailoverKeepsThePromises(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three controller processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errw bytes.Buffer
	code := runWithLabVerbs(ctx, []string{"bench", "failover", "--trials", "2", "--jobs", "300", "--clients", "8", "--dir", t.TempDir()}, &out, &errw)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errw.String())
	}
	if !strings.Contains(out.String(), "lost 0, duplicates 0, reused ids 0, trials with errors 0") {
		t.Fatalf("the summary does not show the promises kept:\n%s", out.String())
	}
	if strings.Count(errw.String(), "killed after") != 2 {
		t.Fatalf("want a progress line per trial:\n%s", errw.String())
	}
}
