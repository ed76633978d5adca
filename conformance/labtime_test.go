package conformance

import (
	"testing"
	"time"

	"github.com/parityhpc/parity/healthcheck"
	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/vendors/contract"
)

// checkLabTime asserts what a full run on a lab shows of its simulated
// clock and its empty hosts: on every vendor with GPUs, a drained GPU's
// recovery, which takes six clean samples taken a second apart in real
// time, passed in less than those samples' real time (it came from steps
// of the lab's clock), and the vendor's driver was run on a host without
// its hardware.
func checkLabTime(t *testing.T, got map[specKey]reports.SpecResult, vendors []VendorTarget) {
	t.Helper()
	realSamples := time.Duration(healthcheck.DefaultConfig().RecoveryPasses-1) * cluster.SampleInterval
	for _, v := range vendors {
		if !v.HasGPUs() {
			continue
		}
		if s := got[specKey{"health/diagnosis-resume", v.Name}]; s.Status != reports.StatusPassed || s.Duration >= realSamples {
			t.Errorf("health/diagnosis-resume on %s: %s in %v; want passed in under %v, the real time of the samples it needs",
				v.Name, s.Status, s.Duration, realSamples)
		}
		if s := got[specKey{contract.SpecID(contract.CheckNotApplicable), v.Name}]; s.Status != reports.StatusPassed {
			t.Errorf("%s on %s: %s (%s), want passed on the lab's empty host", s.ID, v.Name, s.Status, s.Reason)
		}
	}
}
