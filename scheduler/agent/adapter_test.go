package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
)

// TestAdapterCrashDrainsAndReconnects: an adapter whose process dies has
// its devices drained with a condition naming the socket; its calls fail
// clearly; reconnection backs off on the agent's clock (1s, then 2s),
// and when the adapter is back its devices prepare, sample and pass the
// adapter's presence diagnosis again.
func TestAdapterCrashDrainsAndReconnects(t *testing.T) {
	r := newAdapterRig(t, acmeInventory(4))
	if got := r.sampled(); len(got) != 4 {
		t.Fatalf("sampled %v before the crash", got)
	}
	if err := r.prepare("job-1", "ACME-0"); err != nil {
		t.Fatal(err)
	}

	r.crash()
	r.probe()
	conds := r.drained(4)
	for _, u := range []string{"ACME-0", "ACME-1", "ACME-2", "ACME-3"} {
		c, ok := conds[u]
		if !ok || c.Kind != ConditionKindAdapter || c.Code != AdapterGone || c.Severity != gres.SeverityFatal ||
			!strings.Contains(c.Message, r.policy.Target) {
			t.Errorf("device %s: condition %+v, want a fatal adapter/gone naming %s", u, c, r.policy.Target)
		}
	}
	if err := r.prepare("job-2", "ACME-1"); !errors.Is(err, ErrAdapterDown) || !strings.Contains(err.Error(), r.policy.Target) {
		t.Errorf("prepare while gone: %v, want ErrAdapterDown naming the socket", err)
	}
	if got := r.sampled(); len(got) != 0 {
		t.Errorf("a gone adapter sampled %v: its devices must fall silent", got)
	}

	// Backoff on the injected clock: the first retry after ReconnectMin,
	// the next after twice that.
	r.clock.waitTimer(t, time.Second)
	r.clock.advance(time.Second)
	<-r.dials
	r.clock.waitTimer(t, 2*time.Second) // the attempt failed; the next waits twice as long
	if d := r.clock.nextDue(); d != 2*time.Second {
		t.Fatalf("second reconnect in %v, want 2s (doubled)", d)
	}

	r.serve()
	r.clock.advance(2 * time.Second)
	<-r.dials
	r.waitUp()
	r.noMoreConditions()
	if err := r.prepare("job-2", "ACME-1"); err != nil {
		t.Errorf("prepare once back: %v", err)
	}
	if got := r.sampled(); len(got) != 4 {
		t.Errorf("sampled %v once back, want all 4", got)
	}
	d, err := r.ad.Diagnose(context.Background(), "ACME-1", 1)
	if err != nil || !d.Passed {
		t.Errorf("presence diagnosis once back: %+v, %v", d, err)
	}
}

// TestAdapterDiagnosisWhileGone: a diagnosis of a gone adapter's device
// fails naming why, so the health policy keeps it drained.
func TestAdapterDiagnosisWhileGone(t *testing.T) {
	r := newAdapterRig(t, acmeInventory(2))
	r.crash()
	r.probe()
	r.drained(2)
	if _, err := r.ad.Diagnose(context.Background(), "ACME-0", 1); !errors.Is(err, ErrAdapterDown) {
		t.Errorf("diagnose while gone: %v, want ErrAdapterDown", err)
	}
	if _, err := r.ad.Diagnose(context.Background(), "GPU-0", 1); !errors.Is(err, gres.ErrUnknownDevice) {
		t.Errorf("diagnose of another driver's device: %v, want ErrUnknownDevice", err)
	}
	if inv, _ := r.ad.Discover(context.Background()); !slices.ContainsFunc(inv.Devices, func(d gres.Device) bool { return d.UUID == "ACME-1" }) {
		t.Errorf("the registered inventory lost a device while the adapter is gone: %+v", inv.Devices)
	}
}
