package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/parityhpc/parity/reports"
)

// ginkgo runs one suite per process, so a test that needs a run of its own
// re-runs this binary with envName naming the report file; TestMain sends
// the child to the test's main, which writes the run with writeChildRun.

// childRun runs the child (with env besides this process's) and returns its run and the report's path.
func childRun(t *testing.T, envName string, env ...string) (*reports.Run, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envName+"="+out), env...)
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child run: %v\n%s", err, log)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := reports.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return run, out
}

// writeChildRun writes the child's run where envName says.
func writeChildRun(envName string, run *reports.Run) error {
	f, err := os.Create(os.Getenv(envName))
	if err != nil {
		return err
	}
	if err := reports.WriteJSON(f, run); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
