package core

import (
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
	snap.Jobs = []Job{job(1, 1, 4, "h100", time.Hour), job(2, 2, 8, "h100", time.Hour), job(3, 1, 2, "", time.Hour)}
	p := Schedule(snap, DefaultConfig(), t0)
	for _, d := range p.Decisions {
		t.Logf("%+v", d)
	}
	for _, s := range p.Starts {
		t.Logf("start %+v", s)
	}
	t.Logf("resv %+v warnings %v stats %+v", p.Reservations, p.Warnings, p.Stats)
}
