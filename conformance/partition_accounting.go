package conformance

import (
	"fmt"
	"math"
	"strconv"
	"time"

	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
)

// specPartitionGPUSeconds runs a job on one slice and reads its ledger
// line: the slice counts once in its own type (gres/gpu:TYPE=1) and as its
// share of the parent GPU in gres/gpu, so the GPU-seconds charged are the
// elapsed time × that share (1/7 of a GPU-hour an hour on a 1g.10gb
// slice). The shares the node's slices carry never charge one GPU more
// than once: those of one parent add up to at most 1.
func specPartitionGPUSeconds(e *Env) {
	s := e.partitioned()
	slice := s.common()
	share, err := slice.Share()
	if err != nil {
		e.Failf("slice %s: %v", slice.UUID, err)
	}
	over := sharesOverOne(s)
	e.Expect(over).To(gm.BeEmpty(), "parents whose slices' shares add up past one GPU on %s", s.node)
	e.Observe("parent_shares_within_one", strconv.FormatBool(len(over) == 0))
	script := "date +%s.%N\nsleep 2\ndate +%s.%N"
	id := e.submitGRES("partition-gpu-seconds", s.node, gres.Flags{GRES: "gpu:" + slice.Type + ":1"}, script)
	j := e.WaitEnded(id)
	e.Expect(j.GetState()).To(gm.Equal("COMPLETED"), describeJob(j))
	e.Observe("state", j.GetState())
	elapsed := api.Time(j.GetEndTime()).Sub(api.Time(j.GetStartTime()))
	inside := e.jobWallTime(id)
	e.Expect(elapsed).To(gm.BeNumerically(">=", inside-time.Second), "recorded elapsed vs the job's own clock")
	recs, ok := e.ledgerLines(id, 1)
	if !ok {
		e.Observe("charged", "ledger unreachable")
		return
	}
	e.Expect(recs).To(gm.HaveLen(1), "ledger lines of job %d", id)
	r := recs[0]
	typed := r.AllocTRES[accounting.TRESGPU+":"+slice.Type]
	gpus := r.AllocTRES.GPUs()
	seconds := r.End.Sub(r.Start).Seconds()
	e.Evidence("log", fmt.Sprintf("slice %s (%s, share %v of %s): ledger AllocTRES %s over %.1f s", slice.UUID, slice.Type, share, slice.Parent, r.AllocTRES, seconds), nil)
	e.Expect(typed).To(gm.Equal(1.0), "gres/gpu:%s in the ledger's AllocTRES %s: slices are counted in their type", slice.Type, r.AllocTRES)
	e.Expect(gpus).To(gm.BeNumerically("~", share, 1e-9), "gres/gpu in the ledger's AllocTRES %s: the slice's share of a GPU", r.AllocTRES)
	charged := seconds * gpus
	e.Expect(charged).To(gm.BeNumerically("~", seconds*share, 1e-6), "GPU-seconds charged for %.1f s on a %v slice", seconds, share)
	e.Observe("typed_count", strconv.FormatFloat(typed, 'f', -1, 64))
	e.Observe("charged", boolWord(math.Abs(gpus-share) < 1e-9, "elapsed×share", fmt.Sprintf("gres/gpu=%v for share %v", gpus, share)))
	e.Observe("share_below_one", strconv.FormatBool(gpus < 1))
}

// sharesOverOne lists the parents whose slices' shares sum past one.
func sharesOverOne(s splitNode) []string {
	sum := map[string]float64{}
	for _, d := range s.parts {
		v, err := d.Share()
		if err != nil {
			v = 1
		}
		sum[d.Parent] += v
	}
	var out []string
	for p, v := range sum {
		if v > 1+1e-9 {
			out = append(out, fmt.Sprintf("%s (%.3f)", p, v))
		}
	}
	return out
}
