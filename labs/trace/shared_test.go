package trace

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedTrace finds a file of the shared trace collection, which lives in
// ../shared/data/traces beside the module root (CI keeps a copy there).
func sharedTrace(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "data", "traces", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("SKIPPING: shared trace %s is absent (%v); real-trace checks did not run", p, err)
	}
	return p
}

func TestReadKTH(t *testing.T) {
	tr, err := Open(sharedTrace(t, "KTH-SP2-1996-2.swf"), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	// The README: 28,489 records, 28,481 with run > 0 and procs > 0; 100 processors.
	if tr.Records != 28489 || len(tr.Jobs) != 28481 || tr.Skipped.NoRuntime != 8 || tr.Skipped.Total() != 8 {
		t.Errorf("records %d jobs %d skipped %+v", tr.Records, len(tr.Jobs), tr.Skipped)
	}
	if tr.Header.MaxProcs != 100 || tr.Header.MaxNodes != 100 || tr.Header.UnixStartTime != 843480031 {
		t.Errorf("header %+v", tr.Header)
	}
	for _, j := range tr.Jobs {
		if j.ID == 27313 {
			t.Error("job 27313 is a gap in the source, yet it was read")
		}
		if j.Requested <= 0 {
			t.Errorf("job %d has no requested time; every KTH job has one", j.ID)
			break
		}
	}
}

func TestReadPhilly(t *testing.T) {
	tr, err := Open(sharedTrace(t, "philly.csv"), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 82247 || tr.Records != 82247 {
		t.Errorf("jobs %d records %d, want 82,247", len(tr.Jobs), tr.Records)
	}
	gpus := map[int]int{}
	vcs := map[string]bool{}
	for _, j := range tr.Jobs {
		gpus[j.Procs]++
		vcs[j.Account] = true
	}
	// GPU counts the README lists.
	if gpus[1] != 76627 || gpus[2] != 1818 || gpus[8] != 1643 || gpus[128] == 0 || len(vcs) != 15 {
		t.Errorf("gpu histogram %v, %d VCs", gpus, len(vcs))
	}
}
