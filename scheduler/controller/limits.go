package controller

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/policy"
)

// checkSubmitLimitsLocked applies the QOS and account limits to a
// submission (c.mu held): submit-count limits always, per-job limits
// (MaxWall, and MaxTRESPerJob and MaxTRESPerNode on the GPUs the
// request names, typed or not) when the QOS denies on limit or the job has none. The rest of what
// the job asks of TRES is judged at schedule time by the core's limiter,
// so such a job pends with the limit's reason rather than being refused.
// Limits may differ per partition (a partition's QOS): a job listing
// several is checked in each, refused only when every one refuses it,
// and otherwise keeps those that accept it (the notes say which went).
func (c *Controller) checkSubmitLimitsLocked(j *job) ([]string, error) {
	l := c.pcfg().Limits
	if l == nil {
		return nil, nil
	}
	g := l.NewLedger()
	for _, o := range c.st.m.Active() {
		if finished(o.State) {
			continue
		}
		n := 1
		if o.arrayHolder() {
			n = o.array.PendingCount()
		}
		g.Charge(core.LimitJob(&o.Core, o.Core.TimeLimit), policy.Amount{Jobs: n})
	}
	want := policy.Amount{Jobs: 1}
	want.GPUs, want.NodeGPUs, want.GPUType = core.RequestedGPUs(&j.Core)
	if j.array != nil {
		want.Jobs = j.array.Size()
	}
	if len(j.Core.Partitions) < 2 {
		if err := l.CheckSubmit(g, core.LimitJob(&j.Core, j.Core.TimeLimit), want); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "submit: %v", err)
		}
		return nil, nil
	}
	var kept, notes, msgs []string
	for _, name := range j.Core.Partitions {
		lj := core.LimitJob(&j.Core, j.Core.TimeLimit)
		lj.Partition = name
		if err := l.CheckSubmit(g, lj, want); err != nil {
			notes = append(notes, fmt.Sprintf("partition %s dropped: %v", name, err))
			msgs = append(msgs, fmt.Sprintf("partition %s: %v", name, err))
			continue
		}
		kept = append(kept, name)
	}
	if len(kept) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "submit: the job fits none of its partitions: %s", strings.Join(msgs, "; "))
	}
	if len(notes) > 0 {
		j.setPartitions(kept)
	}
	return notes, nil
}
