package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdapterAbsentAtRestart: an adapter that registered devices at the
// agent's last start and is not up at this one (its binary missing, its
// socket not there) has those devices registered again, drained with a
// fatal condition naming the socket, that it was not up at the start, and
// the connect error; its calls fail clearly; when it answers, its devices
// are as registered and prepare again, with nothing else drained.
func TestAdapterAbsentAtRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state", AdapterStateFile("", "unix:///run/parity/acme.sock"))
	first := newAdapterRigWith(t, acmeInventory(4), rigOptions{served: true, stateFile: state})
	first.ad.Close()
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("the first start kept no inventory: %v", err)
	}

	r := newAdapterRigWith(t, acmeInventory(4), rigOptions{stateFile: state})
	if !errors.Is(r.attachErr, ErrAdapterDown) || !strings.Contains(r.attachErr.Error(), r.policy.Target) {
		t.Errorf("attach of an absent adapter: %v, want ErrAdapterDown naming the socket", r.attachErr)
	}
	inv, _ := r.ad.Discover(t.Context())
	if len(inv.Devices) != 4 {
		t.Fatalf("registered %d devices, want the 4 kept from the last start", len(inv.Devices))
	}
	for u, c := range r.checkDrained(4, AdapterAbsent, "not up at the agent's start") {
		if !strings.Contains(c.Message, "connect") {
			t.Errorf("device %s: %q does not say why (the connect error)", u, c.Message)
		}
	}
	if err := r.prepare("job-1", "ACME-0"); !errors.Is(err, ErrAdapterDown) {
		t.Errorf("prepare while absent: %v, want ErrAdapterDown", err)
	}

	r.serve()
	r.reconnect()
	r.noMoreConditions()
	if err := r.prepare("job-1", "ACME-0"); err != nil {
		t.Errorf("prepare once the adapter answers: %v", err)
	}
	select {
	case <-r.ad.InventoryGrew():
		t.Error("the devices were registered at the start: the node must not register again")
	default:
	}
}

// TestAdapterFirstSeenAfterStart: an adapter never seen before and absent
// at the agent's start leaves the node without its devices (no
// conditions: there are none to name) until it answers; then its
// inventory is registered, kept for the next start, and the agent is told
// to register the node again.
func TestAdapterFirstSeenAfterStart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "adapter.json")
	r := newAdapterRigWith(t, acmeInventory(3), rigOptions{stateFile: state})
	if inv, _ := r.ad.Discover(t.Context()); len(inv.Devices) != 0 {
		t.Fatalf("registered %v before the adapter answered", inv.Devices)
	}
	r.noMoreConditions()

	r.serve()
	r.reconnect()
	select {
	case <-r.ad.InventoryGrew():
	default:
		t.Fatal("the adapter's first inventory did not ask the agent to register again")
	}
	inv, _ := r.ad.Discover(t.Context())
	if len(inv.Devices) != 3 {
		t.Errorf("registered %d devices once up, want 3", len(inv.Devices))
	}
	if err := r.prepare("job-1", "ACME-2"); err != nil {
		t.Errorf("prepare of an adopted device: %v", err)
	}
	r.noMoreConditions()
	if _, err := os.Stat(state); err != nil {
		t.Errorf("the adopted inventory was not kept for the next start: %v", err)
	}
}

// TestAdapterAbsentAtStartJoinsTheNode: through a real controller and
// agent, a node whose adapter is not up at the agent's start registers
// with its other devices only and runs their jobs; when the adapter comes
// up the agent registers again, and the adapter's devices take jobs.
func TestAdapterAbsentAtStartJoinsTheNode(t *testing.T) {
	al := startAdapterLab(t, false, "")
	lab := al.lab
	nd, err := lab.admin.GetNode(al.ctx, "p1")
	if err != nil || len(nd.GetGpus()) != len(al.found.Inventory.Devices) {
		t.Fatalf("p1 registered %d GPUs (%v), want only its %d H100s", len(nd.GetGpus()), err, len(al.found.Inventory.Devices))
	}
	onH100 := lab.submit("p1", "gpu", "on-h100")
	lab.running(onH100, 0)

	t.Cleanup(al.serve())
	lab.waitFor("the adapter's devices registered", func() bool {
		nd, err := lab.admin.GetNode(al.ctx, "p1")
		return err == nil && len(nd.GetGpus()) == len(al.found.Inventory.Devices)+4
	})
	lab.nodes["p1"].gpuType = "a1"
	if gpu := lab.running(lab.submit("p1", "gpu", "on-acme"), 0); !strings.HasPrefix(gpu, "ACME-") {
		t.Errorf("the a1 job runs on %s", gpu)
	}
	if j := lab.job(onH100); j.GetState() != "RUNNING" || j.GetRestarts() != 0 {
		t.Errorf("the H100 job across the new registration: %s, restarts %d", j.GetState(), j.GetRestarts())
	}
}

// TestAdapterAbsentAtRestartDrainsItsDevices: through a real controller,
// the devices an absent adapter registered at the agent's last start are
// on the node, drained with a reason that says the adapter was not up at
// the start; the node and its H100s stay in service; when the adapter
// answers, its devices return through the health policy.
func TestAdapterAbsentAtRestartDrainsItsDevices(t *testing.T) {
	state := filepath.Join(t.TempDir(), "adapter.json")
	(&Adapter{cfg: AdapterConfig{StateFile: state}, log: quietLog()}).saveState(acmeInventory(4))
	al := startAdapterLab(t, false, state)
	lab := al.lab
	acmes := []string{"ACME-0", "ACME-1", "ACME-2", "ACME-3"}
	lab.waitFor("the absent adapter's devices drained", func() bool {
		for _, u := range acmes {
			if !strings.Contains(lab.gpu("p1", u).GetDrainReason(), "not up at the agent's start") {
				return false
			}
		}
		return true
	})
	t.Logf("drain reason: %s", lab.gpu("p1", "ACME-0").GetDrainReason())
	for _, d := range al.found.Inventory.Devices {
		if g := lab.gpu("p1", d.UUID); g.GetState() == "drain" {
			t.Errorf("H100 %s drained by the absent adapter: %v", d.UUID, g)
		}
	}
	if nd, err := lab.admin.GetNode(al.ctx, "p1"); err != nil || strings.Contains(strings.Join(nd.GetFlags(), ","), "DRAIN") {
		t.Errorf("node with an absent adapter: %v, %v", nd.GetFlags(), err)
	}

	t.Cleanup(al.serve())
	lab.waitFor("the adapter's devices resumed", func() bool {
		for _, u := range acmes {
			if g := lab.gpu("p1", u); g.GetDrainReason() != "" || g.GetHealth() != "healthy" {
				return false
			}
		}
		return true
	})
}
