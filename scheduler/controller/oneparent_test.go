package controller

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/auth"
)

// A job submitted with --gres-flags=one-parent gets its slices from one
// whole GPU: with one slice of GPU 0 taken, the two it asks for are GPU
// 1's, though a free slice of GPU 0 is left.
func TestOneParentFlagReachesPlacement(t *testing.T) {
	h := startController(t, shareCluster)
	inv := inventory("m1", 16, 2)
	for gpu := range 2 {
		parent := inv.Devices[gpu]
		for k := range 2 {
			inv.Devices = append(inv.Devices, gres.Device{UUID: fmt.Sprintf("P%d-%d", gpu, k), Vendor: "sim", Type: "1g.10gb",
				Index: 2 + 2*gpu + k, LocalCPUs: parent.LocalCPUs, Parent: parent.UUID, Partition: "1g.10gb",
				Attributes: map[string]string{gres.AttrShare: "1/2"}})
		}
	}
	registerInv(t, h, "m1", inv)
	alice := h.as("alice", auth.RoleUser)
	first := h.submit(alice, sliceJob("first", "1g.10gb", 1))
	h.pass()
	got := h.job(first).GetAlloc()[0].GetDevices()
	if len(got) != 1 {
		t.Fatalf("first job given %v", got)
	}
	taken := got[0][:2] // "P0" or "P1"
	spec := sliceJob("pair", "1g.10gb", 2)
	spec.GresFlags = "one-parent"
	pair := h.submit(alice, spec)
	h.pass()
	j := h.job(pair)
	if j.GetState() != StateRunning {
		t.Fatalf("one-parent job %s: %s", j.GetState(), j.GetReason())
	}
	for _, u := range j.GetAlloc()[0].GetDevices() {
		if strings.HasPrefix(u, taken) {
			t.Errorf("one-parent job given %v, which includes a slice of %s, the GPU the first job is on", j.GetAlloc()[0].GetDevices(), taken)
		}
	}
}
