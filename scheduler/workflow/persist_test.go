package workflow

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

func TestArrayRecordRoundTrip(t *testing.T) {
	spec, err := jobspec.ParseArray("0-99%5", 1000)
	if err != nil {
		t.Fatal(err)
	}
	a := NewArrayJob(7, spec)
	next := core.JobID(100)
	tasks := a.NextTasks(0, func() core.JobID { next++; return next })
	if err := a.SetState(tasks[0].Index, Running, 0, time.Unix(5, 0)); err != nil {
		t.Fatal(err)
	}
	sel, _ := jobspec.ParseArray("50-59", 1000)
	a.Cancel(sel)
	b, err := json.Marshal(a.Record())
	if err != nil {
		t.Fatal(err)
	}
	var rec ArrayRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	got, err := RestoreArrayJob(rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.PendingName() != a.PendingName() || got.PendingCount() != a.PendingCount() || got.Size() != a.Size() {
		t.Fatalf("restored %q (%d), want %q (%d)", got.PendingName(), got.PendingCount(), a.PendingName(), a.PendingCount())
	}
	// The throttle still counts the tasks split off before the restart.
	if more := got.NextTasks(0, func() core.JobID { next++; return next }); len(more) != 0 {
		t.Fatalf("restored array split %d more tasks past its %%5 throttle", len(more))
	}
	if st, _ := got.Task(55); st.State != Cancelled {
		t.Fatalf("task 55 = %s, want CANCELLED", st.State)
	}
	rec.Pending = append(rec.Pending, jobspec.ArrayRange{First: 3, Last: 2, Step: 1})
	if _, err := RestoreArrayJob(rec); err == nil {
		t.Fatal("a malformed pending range was accepted")
	}
}
