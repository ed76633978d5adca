package conformance

import (
	"github.com/onsi/ginkgo/v2/types"

	"github.com/parityhpc/parity/reports"
)

// SuiteVersion names this suite: its set of specs and what each asserts.
// Reports and driver certificates record it, so a certificate says which
// suite an adapter passed; change it when a spec is added, removed or
// asserts something else.
const SuiteVersion = "2026.12.1"

// KnownSuiteVersions are the suite versions whose certificates this build
// verifies, oldest first. 2026.12.1 added the --gpu-bind, collective
// topology, expedited requeue and partition specs.
func KnownSuiteVersions() []string { return []string{"2026.12", SuiteVersion} }

// finishSpec converts a ginkgo spec report into the run's result.
func (st *runState) finishSpec(r types.SpecReport) {
	k, ok := keyOf(r)
	if !ok {
		return // not one of ours (or filtered before it started)
	}
	st.mu.Lock()
	st.done++
	var res reports.SpecResult
	if k.Vendor == "" {
		res = st.parity[k.ID]
		if s := statusOf(r, false); s == reports.StatusError {
			res.Status, res.Reason = s, failureText(r)
		}
		res.Duration = r.RunTime
	} else {
		res = st.vendorResult(k, r)
	}
	st.results = append(st.results, res)
	done, total := st.done, st.total
	st.mu.Unlock()
	st.opts.Logger.Info("conformance spec", "spec", res.ID, "vendor", res.Vendor, "status", res.Status, "reason", res.Reason,
		"duration", res.Duration)
	if st.opts.Progress != nil {
		st.opts.Progress(Progress{Done: done, Total: total, Spec: res.ID, Vendor: res.Vendor, Name: res.Name, Ended: true, Status: res.Status})
	}
}

// vendorResult builds one vendor's result (st.mu held).
func (st *runState) vendorResult(k specKey, r types.SpecReport) reports.SpecResult {
	d, _ := specByID(k.ID)
	rec := st.records[k]
	if rec == nil {
		rec = &specRecord{}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	res := reports.SpecResult{ID: k.ID, Area: d.Area, Name: d.Name, Vendor: k.Vendor, Status: statusOf(r, rec.errored), Duration: r.RunTime}
	switch res.Status {
	case reports.StatusSkipped:
		res.Reason = failureText(r)
		if res.Reason == "" {
			res.Reason = "skipped by ginkgo (" + r.State.String() + ")"
		}
	case reports.StatusFailed, reports.StatusError:
		res.Reason = firstLine(failureText(r))
		ev := reports.Evidence{Kind: "failure", Text: failureText(r),
			Data: map[string]string{"location": r.Failure.Location.String()}}
		res.Evidence = append([]reports.Evidence{ev}, rec.evidence...)
	}
	if res.Status != reports.StatusSkipped && len(rec.obs) > 0 {
		res.Observations = map[string]string{}
		for k, v := range rec.obs {
			res.Observations[k] = v
		}
	}
	return res
}

// statusOf maps ginkgo's spec state to a report status.
func statusOf(r types.SpecReport, errored bool) reports.Status {
	switch r.State {
	case types.SpecStatePassed:
		return reports.StatusPassed
	case types.SpecStateSkipped, types.SpecStatePending:
		return reports.StatusSkipped
	case types.SpecStateFailed:
		if errored {
			return reports.StatusError
		}
		return reports.StatusFailed
	}
	return reports.StatusError // panicked, interrupted, aborted, timed out
}

func failureText(r types.SpecReport) string {
	msg := r.Failure.Message
	if r.Failure.ForwardedPanic != "" {
		msg += " (panic: " + r.Failure.ForwardedPanic + ")"
	}
	if msg == "" && r.State == types.SpecStatePending {
		msg = "pending"
	}
	return msg
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
