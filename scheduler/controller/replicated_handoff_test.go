package controller

import (
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/replica"
)

// TestAGracefulStopHandsTheLeadershipOff: the leader stopped on purpose
// hands its leadership to a follower, which serves at once; after a crash
// the followers would first wait out a heartbeat timeout (1.5 s here,
// longer than the test allows for the new leader).
func TestAGracefulStopHandsTheLeadershipOff(t *testing.T) {
	slow := replica.Timing{Heartbeat: 1500 * time.Millisecond, Election: 1500 * time.Millisecond,
		LeaderLease: 500 * time.Millisecond, Commit: 5 * time.Millisecond}
	tr := startTrioTimed(t, "", slow)
	lead := tr.leader()
	term := tr.cs[lead].repl.node.Status().Term
	c := tr.cs[lead]
	delete(tr.cs, lead)
	stop := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var next string
	for next == "" && time.Since(stop) < time.Second {
		for a, other := range tr.cs {
			if other.serving() {
				next = a
			}
		}
		time.Sleep(5 * time.Millisecond) // the new leader's barrier and reload run on its own goroutine
	}
	if next == "" {
		t.Fatalf("no controller serves within 1 s of the leader's planned stop (a heartbeat timeout is 1.5 s): the leadership was not handed off")
	}
	if got := tr.cs[next].repl.node.Status().Term; got != term+1 {
		t.Errorf("the new leader's term is %d, want %d (one hand-off, no contested election)", got, term+1)
	}
	t.Logf("%s serves %v after %s's stop began", next, time.Since(stop).Round(time.Millisecond), lead)
}
