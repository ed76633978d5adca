package jobhistory

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Recorder collects a history from concurrent clients.
type Recorder struct {
	mu    sync.Mutex
	start time.Time
	ops   []porcupine.Operation
}

// NewRecorder starts a history; times are counted from now.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// Call is one operation in flight.
type Call struct {
	r      *Recorder
	client int
	in     Input
	call   int64
}

// Begin records the invocation of in by client (a small number naming the
// client, for the visualisation) and returns the call to End.
func (r *Recorder) Begin(client int, in Input) *Call {
	return &Call{r: r, client: client, in: in, call: time.Since(r.start).Nanoseconds()}
}

// End records the call's answer. A read that failed says nothing about the
// table and is left out, as is a submission of unknown outcome: no later
// operation can name the job it may have made.
func (c *Call) End(out Output) {
	ret := time.Since(c.r.start).Nanoseconds()
	if out.Outcome == Unknown && (c.in.Kind == Read || c.in.Kind == Submit) {
		return
	}
	op := porcupine.Operation{ClientId: c.client, Input: c.in, Call: c.call, Output: out, Return: ret}
	c.r.mu.Lock()
	c.r.ops = append(c.r.ops, op)
	c.r.mu.Unlock()
}

// Len is how many operations the history holds.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops)
}

// history is the recorded operations, an unknown outcome's answer placed
// after every other: it may take effect at any time after its invocation.
func (r *Recorder) history() []porcupine.Operation {
	r.mu.Lock()
	ops := append([]porcupine.Operation(nil), r.ops...)
	r.mu.Unlock()
	var end int64
	for _, op := range ops {
		end = max(end, op.Return)
	}
	for i := range ops {
		if ops[i].Output.(Output).Outcome == Unknown {
			ops[i].Return = end + 1
		}
	}
	return ops
}

// Check reports whether the history is linearizable. When it is not, or the
// checker ran out of time, the visualisation is written to dir and its
// path returned with the error.
func (r *Recorder) Check(timeout time.Duration, dir string) error {
	m := model()
	res, info := porcupine.CheckOperationsVerbose(m, r.history(), timeout)
	if res == porcupine.Ok {
		return nil
	}
	path := filepath.Join(dir, "history.html")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("jobhistory: history not linearizable (%s), and its visualisation could not be saved: %w", res, err)
	}
	if err := porcupine.VisualizePath(m, info, path); err != nil {
		return fmt.Errorf("jobhistory: history not linearizable (%s), and its visualisation could not be saved: %w", res, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "history.txt"), r.text(), 0o644); err != nil {
		return fmt.Errorf("jobhistory: history not linearizable (%s), and its text could not be saved: %w", res, err)
	}
	if res == porcupine.Unknown {
		return fmt.Errorf("jobhistory: the checker ran out of time (%v) on %d operations; history saved to %s", timeout, r.Len(), path)
	}
	return fmt.Errorf("jobhistory: the history of %d operations is not linearizable against the job table; open %s to see it", r.Len(), path)
}

// DirEnv names a directory for the visualisations of failed checks; unset,
// they go under the test's temporary directory (removed after the test).
const DirEnv = "PARITY_HISTORY_DIR"

// CheckT fails t when the history is not linearizable, naming the saved
// visualisation.
func (r *Recorder) CheckT(t testing.TB) {
	t.Helper()
	dir := os.Getenv(DirEnv)
	if dir == "" {
		dir = t.TempDir()
	} else {
		dir = filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_"))
	}
	if err := r.Check(10*time.Second, dir); err != nil {
		hint := ""
		if os.Getenv(DirEnv) == "" {
			hint = " (set " + DirEnv + " to keep it after the test)"
		}
		t.Fatalf("%v%s", err, hint)
	}
}

// Summary counts the operations by kind and outcome ("read ok: 40, …"),
// for a test's log.
func (r *Recorder) Summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts := map[string]int{}
	var keys []string
	for _, op := range r.ops {
		k := op.Input.(Input).Kind.String() + " " + op.Output.(Output).Outcome.String()
		if counts[k] == 0 {
			keys = append(keys, k)
		}
		counts[k]++
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %d", k, counts[k])
	}
	return b.String()
}

// text is the history job by job, each operation on a line in call order
// (client, call and return in µs from the start), beside the HTML.
func (r *Recorder) text() []byte {
	var b strings.Builder
	for _, part := range byJob(r.history()) {
		slices.SortFunc(part, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
		for _, op := range part {
			fmt.Fprintf(&b, "client %2d  %10d .. %10d  %s\n", op.ClientId, op.Call/1000, op.Return/1000,
				describe(op.Input.(Input), op.Output.(Output)))
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}
