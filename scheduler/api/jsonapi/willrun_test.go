package jsonapi

import (
	"testing"
	"time"
)

func TestWillRunText(t *testing.T) {
	at := time.Date(2026, 11, 29, 21, 12, 51, 0, time.UTC)
	for _, c := range []struct {
		r    SubmitResponse
		want string
	}{
		{SubmitResponse{JobID: 7, ExpectedStart: &at, CPUs: 2, Nodes: []string{"gpu1", "gpu2"}, Partition: "gpu"},
			"Job 7 to start at 2026-11-29T21:12:51 using 2 processors on nodes gpu[1-2] in partition gpu"},
		{SubmitResponse{JobID: 8, ExpectedStart: &at, Partition: "gpu"}, "Job 8 to start at 2026-11-29T21:12:51 in partition gpu"},
		// Placed on no node (-N 0): sbatch's clause with nothing in it.
		{SubmitResponse{JobID: 10, ExpectedStart: &at, Partition: "gpu", NoNodes: true}, "Job 10 to start at 2026-11-29T21:12:51 using 0 processors on nodes  in partition gpu"},
		{SubmitResponse{JobID: 9, Partition: "gpu", PendingReason: "Resources"},
			"Job 9 would wait in partition gpu; no start time is known (Resources)"},
	} {
		if got := c.r.WillRunText(time.UTC, "2006-01-02T15:04:05"); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
