package controller

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// stateRepartition is scontrol-style State=PARTITION: re-split one GPU.
const stateRepartition = "PARTITION"

// repartition is a node's re-partitioning in flight: the GPU, the layout
// asked for, who asked, and whether the GPU was drained before (then it
// stays drained after; otherwise the drain the request put on it is
// lifted once the node re-registers with the new layout).
type repartition struct {
	gpu, user  string
	layout     []string
	wasDrained bool
}

// repartitionLocked starts re-partitioning one whole GPU of n: it refuses
// while a job holds the GPU or any of its partitions, drains the GPU (so
// nothing is placed on partitions about to vanish), remembers the layout
// and, once committed, orders the node's agent to re-partition and
// re-register. The agent's next registration finishes it
// (finishRepartitionLocked).
func (c *Controller) repartitionLocked(n *node, devices, layout []string, user string) ([]write, []func(), error) {
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
	if n.repartition != nil {
		return nil, nil, status.Errorf(codes.FailedPrecondition, "node %s: GPU %s is being re-partitioned to %s; wait for the node to register again",
			n.name, n.repartition.gpu, layoutWords(n.repartition.layout))
	}
	if held := c.heldPartsLocked(n, gpu); len(held) > 0 {
		return nil, nil, status.Errorf(codes.FailedPrecondition, "node %s GPU %s is in use (%s): drain it, wait for those jobs to end, then re-partition",
			n.name, gpu, strings.Join(held, ", "))
	}
	_, wasDrained := n.GPUDrain[gpu]
	reason := "repartition to " + layoutWords(layout)
	if _, err := c.applyLocked(cstate.DrainGPUs{Node: n.name, By: user, Reason: reason, Devices: []string{gpu}}); err != nil {
		return nil, nil, err
	}
	n.repartition = &repartition{gpu: gpu, user: user, layout: slices.Clone(layout), wasDrained: wasDrained}
	ev := &pb.Event{Kind: EventDrain, Node: n.name, Actor: user, Reason: reason, Verdict: "repartition ordered",
		Fields: map[string]string{"devices": gpu, "partitions": strings.Join(layout, ",")}}
	ws, err := c.nodeWrites(n, ev)
	if err != nil {
		return nil, nil, err
	}
	orders, order := n.orders, &pb.Order{Kind: "partition", Device: gpu, Partitions: slices.Clone(layout), Reason: reason}
	return ws, []func(){func() { orders.push(order) }}, nil
}

// heldPartsLocked names the jobs holding gpu or one of its partitions.
func (c *Controller) heldPartsLocked(n *node, gpu string) []string {
	_, _, held := c.nodeUsage(n)
	var out []string
	for _, d := range n.Inventory.Devices {
		if d.UUID != gpu && d.Parent != gpu {
			continue
		}
		if id, ok := held[d.UUID]; ok {
			out = append(out, fmt.Sprintf("job %d on %s", id, d.UUID))
		}
	}
	return out
}

// finishRepartitionLocked ends n's re-partitioning when its agent
// registers: with the layout asked for, the GPU returns to service
// (unless it was drained before); otherwise it stays drained, its reason
// saying what the node reported instead. It returns the note for the
// registration's decision-log record ("" when nothing was in flight).
func (c *Controller) finishRepartitionLocked(n *node, inv *gres.Inventory) (string, error) {
	r := n.repartition
	if r == nil {
		return "", nil
	}
	n.repartition = nil
	var got []string
	for _, d := range inv.Devices {
		if d.Parent == r.gpu {
			got = append(got, d.Type)
		}
	}
	if !slices.Equal(got, r.layout) && !(len(r.layout) == 1 && allOf(got, r.layout[0])) {
		reason := fmt.Sprintf("repartition to %s failed: the node reports %s", layoutWords(r.layout), layoutWords(got))
		if _, err := c.applyLocked(cstate.DrainGPUs{Node: n.name, By: r.user, Reason: reason, Devices: []string{r.gpu}}); err != nil {
			return "", err
		}
		c.log.Warn("repartition failed", "node", n.name, "gpu", r.gpu, "want", r.layout, "got", got)
		return reason, nil
	}
	if !r.wasDrained {
		if _, err := c.applyLocked(cstate.DrainGPUs{Node: n.name, By: r.user, Devices: []string{r.gpu}, Resume: true}); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("GPU %s re-partitioned to %s", r.gpu, layoutWords(got)), nil
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
