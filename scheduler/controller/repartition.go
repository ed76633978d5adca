package controller

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// stateRepartition is scontrol-style State=PARTITION: re-split one GPU.
const stateRepartition = "PARTITION"

// repartition is a node's re-partitioning in flight: the GPU, the layout
// asked for, who asked, whether the GPU was drained before (then it
// stays drained after; otherwise the drain the request put on it is
// lifted once the node re-registers with the new layout) and whether its
// jobs were stopped (--force). It is durable (the node's record), so a
// controller restarted mid-way drains, waits and orders as the first
// one would have. ordered is not: it says this controller sent the
// agent its order, so the node's next registration is the outcome.
type repartition struct {
	GPU        string   `json:"gpu"`
	User       string   `json:"user"`
	Layout     []string `json:"layout,omitempty"`
	WasDrained bool     `json:"wasDrained,omitempty"`
	Force      bool     `json:"force,omitempty"`
	ordered    bool
}

// repartitionLocked starts re-partitioning one whole GPU of n: it drains
// the GPU (so nothing is placed on partitions about to vanish) and
// remembers the layout. With force the jobs holding the GPU or one of its
// partitions are stopped: requeued, or cancelled when they may not be.
// Once nothing holds it, the node's agent is ordered to re-partition and
// re-register (advanceRepartitionLocked); that registration finishes it
// (finishRepartitionLocked).
func (c *Controller) repartitionLocked(n *node, devices, layout []string, force bool, user string) ([]write, []func(), error) {
	if len(devices) != 1 {
		return nil, nil, status.Errorf(codes.InvalidArgument, "State=PARTITION: name exactly one GPU of node %s (got %d)", n.name, len(devices))
	}
	uuids, err := resolveDevices(n, devices)
	if err != nil {
		return nil, nil, err
	}
	gpu := uuids[0]
	dev, _ := n.Inventory.Device(gpu)
	if dev.Parent != "" {
		return nil, nil, status.Errorf(codes.InvalidArgument, "devices=%s: %s is a partition of %s; re-partition the whole GPU", devices[0], gpu, dev.Parent)
	}
	if r := n.repartition; r != nil {
		return nil, nil, status.Errorf(codes.FailedPrecondition, "node %s: GPU %s is being re-partitioned to %s; wait for the node to register again",
			n.name, r.GPU, layoutWords(r.Layout))
	}
	_, wasDrained := n.GPUDrain[gpu]
	reason := "repartition to " + layoutWords(layout)
	if _, err := c.applyLocked(cstate.DrainGPUs{Node: n.name, By: user, Reason: reason, Devices: []string{gpu}}); err != nil {
		return nil, nil, err
	}
	n.repartition = &repartition{GPU: gpu, User: user, Layout: slices.Clone(layout), WasDrained: wasDrained, Force: force}
	held := c.heldPartsLocked(n, gpu)
	verdict := "repartition ordered"
	if len(held) > 0 {
		verdict = "repartition waits for " + heldWords(held)
		if force {
			verdict = "repartition stops " + heldWords(held)
		}
	}
	ev := &pb.Event{Kind: EventDrain, Node: n.name, Actor: user, Reason: reason, Verdict: verdict,
		Fields: map[string]string{"devices": gpu, "partitions": strings.Join(layout, ",")}}
	ws, err := c.nodeWrites(n, ev)
	if err != nil {
		return nil, nil, err
	}
	var afters []func()
	if force {
		sws, stops := c.stopHoldersLocked(n, held, user, reason)
		ws, afters = append(ws, sws...), append(afters, stops...)
	}
	if len(held) == 0 {
		afters = append(afters, c.orderRepartitionLocked(n))
	}
	return ws, afters, nil
}

// stopHoldersLocked stops the jobs of held for a forced re-partition.
func (c *Controller) stopHoldersLocked(n *node, held map[core.JobID][]string, user, reason string) ([]write, []func()) {
	var ws []write
	var afters []func()
	why := fmt.Sprintf("%s: GPU %s of %s (--force)", reason, n.repartition.GPU, n.name)
	for _, id := range sortedHeld(held) {
		j := c.st.jobs[id]
		if j == nil || !j.live() {
			continue
		}
		stop := cstate.Stop{Job: j.Core.ID, By: user, Reason: why, Requeue: true, Log: EventRequeue}
		if !j.spec.GetRequeue() && !c.cfg.RequeueOnNodeFail {
			stop = cstate.Stop{Job: j.Core.ID, By: user, Reason: why, State: StateCancelled, CancelledBy: user}
		}
		effects, err := c.st.m.Apply(stop, c.now())
		if err != nil {
			c.log.Error("repartition: stop job", "job", id, "err", err)
			continue
		}
		ews, after := c.effectsLocked(effects)
		ws = append(append(ws, c.jobWrites(j)...), ews...)
		if after != nil {
			afters = append(afters, after)
		}
	}
	return ws, afters
}

// orderRepartitionLocked marks n's re-partition ordered and returns the
// push of its order, to run once committed.
func (c *Controller) orderRepartitionLocked(n *node) func() {
	r := n.repartition
	r.ordered = true
	orders, order := n.orders, &pb.Order{Kind: "partition", Device: r.GPU, Partitions: slices.Clone(r.Layout), Reason: "repartition to " + layoutWords(r.Layout)}
	return func() { orders.push(order) }
}

// advanceRepartitionsLocked orders the re-partitions whose GPU no job
// holds any more, on nodes whose agent has registered with this
// controller (after a restart, the first registration may show the
// layout already made). It runs before every scheduling pass.
func (c *Controller) advanceRepartitionsLocked() []func() {
	var out []func()
	for _, name := range c.st.names {
		n := c.st.nodes[name]
		if r := n.repartition; r != nil && !r.ordered && n.registered && len(c.heldPartsLocked(n, r.GPU)) == 0 {
			out = append(out, c.orderRepartitionLocked(n))
		}
	}
	return out
}

// heldPartsLocked maps each job holding gpu or one of its partitions to
// the devices it holds there.
func (c *Controller) heldPartsLocked(n *node, gpu string) map[core.JobID][]string {
	_, _, held := c.nodeUsage(n)
	out := map[core.JobID][]string{}
	for _, d := range n.Inventory.Devices {
		if d.UUID != gpu && d.Parent != gpu {
			continue
		}
		if id, ok := held[d.UUID]; ok {
			out[id] = append(out[id], d.UUID)
		}
	}
	return out
}

func sortedHeld(held map[core.JobID][]string) []core.JobID {
	ids := make([]core.JobID, 0, len(held))
	for id := range held {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// heldWords names the jobs and what they hold: "job 7 on GPU-a-1".
func heldWords(held map[core.JobID][]string) string {
	var out []string
	for _, id := range sortedHeld(held) {
		out = append(out, fmt.Sprintf("job %d on %s", id, strings.Join(held[id], ",")))
	}
	return strings.Join(out, ", ")
}

// finishRepartitionLocked ends n's re-partitioning when its agent
// registers after its order: with the layout asked for, the GPU returns
// to service (unless it was drained before); otherwise it stays drained,
// its reason saying what the node reported instead. A registration
// before any order from this controller (the agent reconnecting after a
// controller restart) finishes it only when it shows the layout made;
// otherwise the re-partition goes on waiting. It returns the note for
// the registration's decision-log record ("" when nothing finished).
func (c *Controller) finishRepartitionLocked(n *node, inv *gres.Inventory) (string, error) {
	r := n.repartition
	if r == nil {
		return "", nil
	}
	var got []string
	for _, d := range inv.Devices {
		if d.Parent == r.GPU {
			got = append(got, d.Type)
		}
	}
	made := slices.Equal(got, r.Layout) || len(r.Layout) == 1 && allOf(got, r.Layout[0])
	if !r.ordered && !made {
		return "", nil
	}
	n.repartition = nil
	if !made {
		reason := fmt.Sprintf("repartition to %s failed: the node reports %s", layoutWords(r.Layout), layoutWords(got))
		if _, err := c.applyLocked(cstate.DrainGPUs{Node: n.name, By: r.User, Reason: reason, Devices: []string{r.GPU}}); err != nil {
			return "", err
		}
		c.log.Warn("repartition failed", "node", n.name, "gpu", r.GPU, "want", r.Layout, "got", got)
		return reason, nil
	}
	if !r.WasDrained {
		if _, err := c.applyLocked(cstate.DrainGPUs{Node: n.name, By: r.User, Devices: []string{r.GPU}, Resume: true}); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("GPU %s re-partitioned to %s", r.GPU, layoutWords(got)), nil
}

// allOf reports whether got is a non-empty run of one mode's partitions
// (a layout "cpx" asks for as many as the mode makes); types may carry
// the model ("mi300x.cpx").
func allOf(got []string, mode string) bool {
	if len(got) < 2 {
		return false
	}
	for _, t := range got {
		if t != mode && !strings.HasSuffix(t, "."+mode) {
			return false
		}
	}
	return true
}

// layoutWords renders a layout as people write it: "3g.40gb+1g.10gb", or
// "whole" for none.
func layoutWords(layout []string) string {
	if len(layout) == 0 {
		return "whole"
	}
	return strings.Join(layout, "+")
}
