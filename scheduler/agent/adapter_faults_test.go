package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
)

// checkDrained asserts n fatal adapter conditions with code, each naming
// the socket and want.
func (r *adapterRig) checkDrained(n int, code, want string) map[string]gres.Condition {
	r.t.Helper()
	conds := r.drained(n)
	for u, c := range conds {
		if c.Kind != ConditionKindAdapter || c.Code != code || c.Severity != gres.SeverityFatal || !strings.Contains(c.Message, r.policy.Target) ||
			!strings.Contains(c.Message, want) {
			r.t.Errorf("device %s: %+v, want a fatal adapter/%s naming the socket and %q", u, c, code, want)
		}
	}
	return conds
}

// reconnect lets the first backoff pass and waits for the adapter to be
// probed as up again.
func (r *adapterRig) reconnect() {
	r.t.Helper()
	r.clock.waitTimer(r.t, r.policy.ReconnectMin)
	r.clock.advance(r.policy.ReconnectMin)
	<-r.dials
	r.waitUp()
}

// TestAdapterHang: an adapter that stops answering is taken as gone once
// a probe outlives the call timeout on the agent's clock; its devices are
// drained naming the hang, and it recovers when it answers again.
func TestAdapterHang(t *testing.T) {
	r := newAdapterRig(t, acmeInventory(4))
	if err := r.prepare("job-0", "ACME-3"); err != nil {
		t.Fatal(err)
	}
	r.accel.setHang(true)
	r.probe()
	r.clock.waitTimer(t, r.policy.CallTimeout)
	r.clock.advance(r.policy.CallTimeout)
	r.checkDrained(4, AdapterHung, "timed out after 3s")
	// The job on ACME-3 ends while the adapter hangs: its release is kept.
	if err := r.ad.Release(context.Background(), "job-0"); err != nil {
		t.Errorf("release while hung: %v", err)
	}
	if err := r.prepare("job-1", "ACME-0"); !errors.Is(err, ErrAdapterDown) || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("prepare on a hung adapter: %v, want ErrAdapterDown saying it timed out", err)
	}
	r.accel.setHang(false)
	r.reconnect()
	r.noMoreConditions()
	if err := r.prepare("job-1", "ACME-0"); err != nil {
		t.Errorf("prepare after the hang: %v", err)
	}
	r.accel.mu.Lock()
	_, held := r.accel.prepared["job-0"]
	r.accel.mu.Unlock()
	if held {
		t.Error("the release kept while the adapter hung was not made when it came back")
	}
}

// TestAdapterMalformedInventory: an inventory the node cannot hold
// drains the adapter's devices naming the fault, and the adapter is
// attached again once it sends a good one.
func TestAdapterMalformedInventory(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(inv *gres.Inventory)
		want  string
	}{
		{"duplicate uuids", func(inv *gres.Inventory) { inv.Devices[3].UUID = inv.Devices[0].UUID }, `duplicate device uuid "ACME-0"`},
		{"an unknown device link class", func(inv *gres.Inventory) {
			inv.Devices[0].Links = []gres.Link{{Peer: "ACME-1", Kind: "warp", Class: "warp-drive"}}
		}, "warp-drive"},
		{"an impossible numa node", func(inv *gres.Inventory) { inv.Devices[2].NUMANode = 7 }, "numa node 7: the host has numa nodes [0 1]"},
		{"a uuid another driver owns", func(inv *gres.Inventory) { inv.Devices[1].UUID = "GPU-0" }, "already reported by driver other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newAdapterRig(t, acmeInventory(4))
			bad := acmeInventory(4)
			tt.spoil(&bad)
			r.accel.set(bad)
			r.probe()
			r.checkDrained(4, AdapterMalformed, tt.want)
			if got := r.sampled(); len(got) != 0 {
				t.Errorf("sampled %v from an adapter with a malformed inventory", got)
			}
			r.accel.set(acmeInventory(4))
			r.reconnect()
			r.noMoreConditions()
			if got := r.sampled(); len(got) != 4 {
				t.Errorf("sampled %v once the inventory is good again", got)
			}
		})
	}
}

// TestAdapterInventoryChangesUnderAJob: the adapter drops one device and
// moves another to a different NUMA node while a job holds both: only
// those two are drained, each naming what changed; the others keep
// preparing and sampling, the job's release still reaches the adapter,
// and both return when the inventory is as registered again.
func TestAdapterInventoryChangesUnderAJob(t *testing.T) {
	r := newAdapterRig(t, acmeInventory(4))
	if err := r.prepare("job-7", "ACME-1", "ACME-2"); err != nil {
		t.Fatal(err)
	}
	changed := acmeInventory(4)
	changed.Devices[2].NUMANode, changed.Devices[2].LocalCPUs = 1, topology.CPURange(8, 15)
	changed.Devices = append(slices.Delete(changed.Devices, 1, 2),
		gres.Device{UUID: "ACME-9", Vendor: "acme", Type: "a1", Index: 9, NUMANode: 1, LocalCPUs: topology.CPURange(8, 15)})
	r.accel.set(changed)
	r.probe()
	conds := r.drained(2)
	if c := conds["ACME-1"]; c.Code != AdapterRemoved || !strings.Contains(c.Message, "left the adapter's inventory") {
		t.Errorf("removed device: %+v", c)
	}
	if c := conds["ACME-2"]; c.Code != AdapterChanged || !strings.Contains(c.Message, "numaNode 0 -> 1") || !strings.Contains(c.Message, "localCpus 0-7 -> 8-15") {
		t.Errorf("changed device: %+v", c)
	}
	r.clock.waitTimer(t, r.policy.ProbeInterval)
	r.noMoreConditions()
	if err := r.prepare("job-8", "ACME-0", "ACME-3"); err != nil {
		t.Errorf("the adapter's unchanged devices: %v", err)
	}
	if err := r.prepare("job-9", "ACME-1"); !errors.Is(err, ErrAdapterDown) || !strings.Contains(err.Error(), "left the adapter's inventory") {
		t.Errorf("prepare of the removed device: %v", err)
	}
	if got := r.sampled(); !slices.Equal(got, []string{"ACME-0", "ACME-3"}) {
		t.Errorf("sampled %v, want the unchanged registered devices only (not the new ACME-9)", got)
	}
	if err := r.ad.Release(context.Background(), "job-7"); err != nil {
		t.Errorf("release of the running job: %v", err)
	}
	if d, err := r.ad.Diagnose(context.Background(), "ACME-2", 1); !errors.Is(err, ErrAdapterDown) && (err != nil || d.Passed) {
		t.Errorf("diagnosis of the changed device: %+v, %v; want a failure", d, err)
	}

	r.accel.set(acmeInventory(4))
	r.probe()
	r.clock.waitTimer(t, r.policy.ProbeInterval)
	r.noMoreConditions()
	if got := r.sampled(); len(got) != 4 {
		t.Errorf("sampled %v once the inventory is as registered", got)
	}
	if d, err := r.ad.Diagnose(context.Background(), "ACME-2", 1); err != nil || !d.Passed {
		t.Errorf("diagnosis once back: %+v, %v", d, err)
	}
}
