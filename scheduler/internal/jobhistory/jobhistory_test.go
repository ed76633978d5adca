package jobhistory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// op is one operation at fixed times, for histories written by hand.
type op struct {
	client    int
	call, ret int64
	in        Input
	out       Output
}

func recorded(ops ...op) *Recorder {
	r := NewRecorder()
	for _, o := range ops {
		if o.out.Outcome == Unknown && (o.in.Kind == Read || o.in.Kind == Submit) {
			continue
		}
		r.ops = append(r.ops, porcupine.Operation{ClientId: o.client, Input: o.in, Call: o.call, Output: o.out, Return: o.ret})
	}
	return r
}

var (
	submitA   = Input{Kind: Submit, Name: "a"}
	job1      = Output{Outcome: OK, Job: 1}
	cancel1   = Input{Kind: Cancel, Job: 1}
	rename1   = Input{Kind: Update, Job: 1, Name: "b"}
	read1     = Input{Kind: Read, Job: 1}
	ok        = Output{Outcome: OK}
	unknown   = Output{Outcome: Unknown}
	finished  = Output{Outcome: Finished}
	notFound  = Output{Outcome: NotFound}
	queuedA   = Output{Outcome: OK, State: Queued, Name: "a"}
	queuedB   = Output{Outcome: OK, State: Queued, Name: "b"}
	cancelled = Output{Outcome: OK, State: Cancelled, Name: "a"}
)

func TestTheCheckerTellsLinearizableHistoriesFromOthers(t *testing.T) {
	tests := []struct {
		name string
		ops  []op
		ok   bool
	}{
		{"submit, cancel, read in turn", []op{{0, 0, 1, submitA, job1}, {0, 2, 3, cancel1, ok}, {1, 4, 5, read1, cancelled}}, true},
		{"a read concurrent with the cancel may see either", []op{{0, 0, 1, submitA, job1}, {0, 2, 6, cancel1, ok},
			{1, 3, 4, read1, queuedA}, {2, 3, 5, read1, cancelled}}, true},
		{"a stale read after the cancel returned", []op{{0, 0, 1, submitA, job1}, {0, 2, 3, cancel1, ok}, {1, 4, 5, read1, queuedA}}, false},
		{"a read after a read saw the cancel goes back", []op{{0, 0, 1, submitA, job1}, {0, 2, 9, cancel1, ok},
			{1, 3, 4, read1, cancelled}, {2, 5, 6, read1, queuedA}}, false},
		{"an acknowledged job lost", []op{{0, 0, 1, submitA, job1}, {1, 2, 3, read1, notFound}}, false},
		{"an id given twice", []op{{0, 0, 1, submitA, job1}, {1, 2, 3, Input{Kind: Submit, Name: "x"}, job1}}, false},
		{"cancelled twice", []op{{0, 0, 1, submitA, job1}, {0, 2, 3, cancel1, ok}, {1, 4, 5, cancel1, ok}}, false},
		{"a second cancel finds it finished", []op{{0, 0, 1, submitA, job1}, {0, 2, 3, cancel1, ok}, {1, 4, 5, cancel1, finished}}, true},
		{"an update of a cancelled job", []op{{0, 0, 1, submitA, job1}, {0, 2, 3, cancel1, ok}, {1, 4, 5, rename1, ok}}, false},
		{"a rename seen", []op{{0, 0, 1, submitA, job1}, {0, 2, 3, rename1, ok}, {1, 4, 5, read1, queuedB}}, true},
		{"an unknown cancel that took effect later", []op{{0, 0, 1, submitA, job1}, {0, 2, 3, cancel1, unknown},
			{1, 4, 5, read1, queuedA}, {1, 6, 7, read1, cancelled}}, true},
		{"an unknown cancel that never did", []op{{0, 0, 1, submitA, job1}, {0, 2, 3, cancel1, unknown}, {1, 4, 5, read1, queuedA}}, true},
		{"an unknown cancel undone", []op{{0, 0, 1, submitA, job1}, {0, 2, 3, cancel1, unknown},
			{1, 4, 5, read1, cancelled}, {1, 6, 7, read1, queuedA}}, false},
		{"a failed read and an unknown submission say nothing", []op{{0, 0, 1, submitA, job1}, {0, 0, 2, Input{Kind: Submit, Name: "z"}, unknown},
			{1, 4, 5, read1, unknown}, {1, 6, 7, read1, queuedA}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			err := recorded(tt.ops...).Check(5*time.Second, dir)
			if (err == nil) != tt.ok {
				t.Fatalf("check = %v, want linearizable %v", err, tt.ok)
			}
			if err != nil {
				path := filepath.Join(dir, "history.html")
				if !strings.Contains(err.Error(), path) {
					t.Fatalf("the failure %q does not name the saved history %s", err, path)
				}
				if b, rerr := os.ReadFile(path); rerr != nil || !strings.Contains(string(b), "read(1)") && !strings.Contains(string(b), "submit(") {
					t.Fatalf("saved history %s: %v (%d bytes), want porcupine's visualisation of the operations", path, rerr, len(b))
				}
			}
		})
	}
}

func TestTheRecorderStampsCallsInOrder(t *testing.T) {
	r := NewRecorder()
	a := r.Begin(0, submitA)
	b := r.Begin(1, Input{Kind: Read, Job: 7})
	a.End(job1)
	b.End(unknown) // a failed read: left out
	c := r.Begin(0, read1)
	c.End(queuedA)
	h := r.history()
	if len(h) != 2 || h[0].Call > h[0].Return || h[0].Return > h[1].Call {
		t.Fatalf("history %+v: want submit then read, each call before its return", h)
	}
	if err := r.Check(time.Second, t.TempDir()); err != nil {
		t.Fatal(err)
	}
}
