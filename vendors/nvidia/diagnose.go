package nvidia

import (
	"context"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/gres"
)

// DCGM is the part of NVIDIA's Data Center GPU Manager the driver uses for
// active diagnostics. vendors/nvidia/nvdcgm implements it over go-dcgm;
// tests use a fake. Implementations must be safe for concurrent use.
type DCGM interface {
	// Diagnose runs DCGM diagnostics at level (2 medium, 3 long, 4
	// extended) on the GPU with the given UUID and reports each test run.
	Diagnose(ctx context.Context, uuid string, level int) ([]gres.DiagnosisTest, error)
}

// DCGMHealthWatcher is an optional capability of the DCGM given with
// WithDCGM, found by type assertion: DCGM's background health watches on
// the GPUs with the given UUIDs, reported to emit as conditions until ctx
// is done. It must not call emit after returning. nvdcgm.Client has it.
type DCGMHealthWatcher interface {
	WatchHealth(ctx context.Context, uuids []string, emit func(gres.Condition)) error
}

// Names of the level-1 checks.
const (
	CheckReachable     = "nvml-reachable"
	CheckRemappedRows  = "row-remap"
	CheckRetiredPages  = "retired-pages"
	CheckUncorrectable = "uncorrectable-ecc"
)

// Diagnose checks one device (a MIG device is checked through its parent
// GPU). Level 1 is NVML only and quick: the GPU answers, no row remap is
// pending or has failed, no page retirement is pending and the volatile
// uncorrectable ECC count is zero. Levels 2 and up add DCGM diagnostics and
// fail with ErrNeedsDCGM when no DCGM was configured — never a fake pass.
func (d *Driver) Diagnose(ctx context.Context, uuid string, level int) (gres.Diagnosis, error) {
	if level < 1 {
		return gres.Diagnosis{}, fmt.Errorf("nvidia: diagnose %s: level %d is below 1", uuid, level)
	}
	if level > 1 && d.opts.dcgm == nil {
		return gres.Diagnosis{}, fmt.Errorf("%w (level %d on %s)", ErrNeedsDCGM, level, uuid)
	}
	done, err := d.begin()
	if err != nil {
		return gres.Diagnosis{}, err
	}
	defer done()
	s, err := d.current(ctx)
	if err != nil {
		return gres.Diagnosis{}, err
	}
	target := uuid
	if p, ok := s.parent[uuid]; ok {
		target = p
	}
	h, ok := s.handles[target]
	if !ok {
		return gres.Diagnosis{}, fmt.Errorf("%w %q: not in the last discovery", ErrUnknownDevice, uuid)
	}
	diag := gres.Diagnosis{UUID: uuid, Level: level, Tests: d.quickChecks(target, h)}
	if level > 1 {
		tests, err := d.opts.dcgm.Diagnose(ctx, target, level)
		if err != nil {
			return gres.Diagnosis{}, fmt.Errorf("nvidia: dcgm diagnose %s level %d: %w", target, level, err)
		}
		diag.Tests = append(diag.Tests, tests...)
	}
	diag.Passed = true
	for _, t := range diag.Tests {
		diag.Passed = diag.Passed && t.Passed
	}
	return diag, nil
}

// quickChecks are the NVML level-1 checks. A check the GPU does not
// support (page retirement on Ampere and newer, which remap rows instead)
// passes with a note; any other refusal fails it.
func (d *Driver) quickChecks(uuid string, h nvml.Device) []gres.DiagnosisTest {
	var tests []gres.DiagnosisTest
	got, ret := call(d, "GetUUID", h.GetUUID)
	reach := gres.DiagnosisTest{Name: CheckReachable, Passed: ret == nvml.SUCCESS && got == uuid}
	if !reach.Passed {
		reach.Message = fmt.Sprintf("GPU does not answer NVML: %v", ret)
		return append(tests, reach) // the other checks would only repeat this
	}
	tests = append(tests, reach)

	remap := gres.DiagnosisTest{Name: CheckRemappedRows, Passed: true}
	if d.has("nvmlDeviceGetRemappedRows") {
		var pending, failed bool
		_, ret := call(d, "GetRemappedRows", func() (int, nvml.Return) {
			var r nvml.Return
			_, _, pending, failed, r = h.GetRemappedRows()
			return 0, r
		})
		remap = verdict(remap, ret, func() (bool, string) {
			switch {
			case failed:
				return false, "row remapping failed: the GPU needs replacement"
			case pending:
				return false, "row remap pending: reset the GPU"
			}
			return true, ""
		})
	} else {
		remap.Message = "not supported by this driver"
	}
	tests = append(tests, remap)

	pages, ret := call(d, "GetRetiredPagesPendingStatus", h.GetRetiredPagesPendingStatus)
	tests = append(tests, verdict(gres.DiagnosisTest{Name: CheckRetiredPages, Passed: true}, ret, func() (bool, string) {
		if pages == nvml.FEATURE_ENABLED {
			return false, "page retirement pending: reset the GPU or reload the driver"
		}
		return true, ""
	}))

	unc, ret := call(d, "GetTotalEccErrors", func() (uint64, nvml.Return) {
		return h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
	})
	tests = append(tests, verdict(gres.DiagnosisTest{Name: CheckUncorrectable, Passed: true}, ret, func() (bool, string) {
		if unc > 0 {
			return false, fmt.Sprintf("%d uncorrectable ECC errors since the driver loaded", unc)
		}
		return true, ""
	}))
	return tests
}

// verdict fills a test from an NVML result and, on success, a judgement.
func verdict(t gres.DiagnosisTest, ret nvml.Return, judge func() (bool, string)) gres.DiagnosisTest {
	switch ret {
	case nvml.SUCCESS:
		t.Passed, t.Message = judge()
	case nvml.ERROR_NOT_SUPPORTED:
		t.Passed, t.Message = true, "not supported on this GPU"
	default:
		t.Passed, t.Message = false, fmt.Sprintf("NVML: %v", ret)
	}
	return t
}
