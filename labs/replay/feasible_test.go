package replay

import (
	"sort"

	"github.com/parityhpc/parity/labs/trace"
)

// checkFeasible verifies a replay's schedule against the trace: no job
// starts before it is submitted, each runs for its runtime or until its
// limit, and the units in use never exceed the lab's capacity.
func checkFeasible(t interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}, tr *trace.Trace, r *Result, o Options) {
	t.Helper()
	if o.RequestedProcs {
		tr = requestedSizes(tr)
	}
	m, err := newMapping(tr, &o)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct{ t, d int64 }
	var evs []ev
	for i, out := range r.Jobs {
		j := &tr.Jobs[i]
		if out.Start < 0 {
			continue
		}
		run, killed := m.duration(j)
		if out.Start < j.Submit || out.End-out.Start != run || out.Killed != killed {
			t.Fatalf("job %d: submit %d, outcome %+v, want a start after submit and run %d (killed %v)", j.ID, j.Submit, out, run, killed)
		}
		evs = append(evs, ev{out.Start, int64(j.Procs)}, ev{out.End, -int64(j.Procs)})
	}
	sort.Slice(evs, func(a, b int) bool { return evs[a].t < evs[b].t || evs[a].t == evs[b].t && evs[a].d < evs[b].d })
	var used int64
	for _, e := range evs {
		if used += e.d; used > int64(r.Capacity) {
			t.Fatalf("%d units in use at %d, capacity %d", used, e.t, r.Capacity)
		}
	}
}
