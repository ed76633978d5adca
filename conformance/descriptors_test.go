package conformance

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/parityhpc/parity/scheduler/agent/shim"
)

// TestProbeFDsListsWhatTheJobWasStartedWith: the fds probe, started with
// one descriptor beyond the standard three, reports exactly those four,
// none of the Go runtime's own, and refuses arguments.
func TestProbeFDsListsWhatTheJobWasStartedWith(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	extra, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	cmd := exec.Command(exe, "conform", "probe", "fds")
	cmd.ExtraFiles = []*os.File{extra}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// What the test process inherited itself stays out of the child.
	if err := shim.SealDescriptors(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe fds: %v: %s", err, stderr.String())
	}
	var rep FDsReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("probe fds printed %q: %v", out, err)
	}
	if got := slices.Sorted(maps.Keys(rep.FDs)); !slices.Equal(got, []string{"0", "1", "2", "3"}) || rep.FDs["3"] != os.DevNull {
		t.Errorf("probe fds reported %v, want 0-3 with 3 → %s", rep.FDs, os.DevNull)
	}
	var o, e bytes.Buffer
	if code := ProbeMain([]string{"fds", "extra"}, &o, &e); code != 1 || o.Len() != 0 {
		t.Errorf("probe fds extra: exit %d, output %q; want 1 and none", code, o.String())
	}
}
