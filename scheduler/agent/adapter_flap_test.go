package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAdapterFlapping: an adapter lost again and again is counted. Its
// first loss drains its devices as gone, the second says it is the second
// within the window, and the third (the policy's limit here) drains them
// as flapping, naming the adapter and the count; once it is back, their
// diagnosis fails naming the same, so the health policy holds them, until
// the adapter has run a whole window without a loss.
func TestAdapterFlapping(t *testing.T) {
	r := newAdapterRigWith(t, acmeInventory(2), rigOptions{served: true,
		policy: func(p *PluginPolicy) { p.FlapRestarts, p.FlapWindow = 3, time.Minute }})
	lose := func() {
		t.Helper()
		r.crash()
		r.probe()
	}
	back := func() {
		t.Helper()
		r.serve()
		r.reconnect()
	}
	diagnose := func() (bool, string) {
		t.Helper()
		d, err := r.ad.Diagnose(context.Background(), "ACME-1", 1)
		if err != nil {
			t.Fatalf("diagnose with the adapter up: %v", err)
		}
		var msgs []string
		for _, tt := range d.Tests {
			msgs = append(msgs, tt.Message)
		}
		return d.Passed, strings.Join(msgs, "; ")
	}

	lose()
	for u, c := range r.checkDrained(2, AdapterGone, "discover") {
		if strings.Contains(c.Message, "lost") {
			t.Errorf("device %s after one loss: %q counts losses", u, c.Message)
		}
	}
	back()
	lose()
	r.checkDrained(2, AdapterGone, "lost 2 times within 1m0s")
	back()
	if ok, why := diagnose(); !ok {
		t.Errorf("diagnosis after two losses failed: %s (the limit is three)", why)
	}

	lose()
	r.checkDrained(2, AdapterFlapping, "flapping: lost 3 times within 1m0s")
	back()
	ok, why := diagnose()
	if ok || !strings.Contains(why, r.policy.Target) || !strings.Contains(why, "lost 3 times") {
		t.Errorf("diagnosis of a flapping adapter's device: passed=%v %q, want a failure naming the adapter and its 3 losses", ok, why)
	}
	r.noMoreConditions()

	r.clock.advance(time.Minute) // a whole window without a loss
	if ok, why := diagnose(); !ok {
		t.Errorf("diagnosis a window after the last loss: %s, want a pass", why)
	}
}

// TestAdapterFlappingHeldDrained: through a real controller and agent, an
// adapter lost three times within its window (each time after its
// devices returned) has its devices drained the third time with a reason
// naming the adapter and the count, and the health policy keeps them
// drained (their diagnosis fails, naming the same) while the node and its
// H100s stay in service.
func TestAdapterFlappingHeldDrained(t *testing.T) {
	al := startAdapterLab(t, true, "", func(p *PluginPolicy) { p.FlapRestarts, p.FlapWindow = 3, time.Hour })
	lab := al.lab
	acmes := []string{"ACME-0", "ACME-1", "ACME-2", "ACME-3"}
	all := func(ok func(reason, health string) bool) func() bool {
		return func() bool {
			for _, u := range acmes {
				if g := lab.gpu("p1", u); !ok(g.GetDrainReason(), g.GetHealth()) {
					return false
				}
			}
			return true
		}
	}
	stop := al.stop
	for loss := 1; loss <= 3; loss++ {
		stop()
		want := "adapter gone"
		if loss == 3 {
			want = "flapping: lost 3 times within 1h0m0s"
		}
		lab.waitFor(fmt.Sprintf("loss %d drains the adapter's devices", loss), all(func(r, _ string) bool { return strings.Contains(r, want) }))
		stop = al.serve()
		if loss < 3 {
			lab.waitFor(fmt.Sprintf("the devices back after loss %d", loss), all(func(r, h string) bool { return r == "" && h == "healthy" }))
		}
	}
	t.Cleanup(stop)
	reason := lab.gpu("p1", "ACME-0").GetDrainReason()
	t.Logf("drain reason: %s", reason)
	if !strings.Contains(reason, "unix://") || !strings.Contains(reason, "acme.sock") {
		t.Errorf("drain reason %q does not name the adapter", reason)
	}
	lab.waitFor("a failed diagnosis holding the devices", func() bool {
		for _, ev := range lab.events("p1") {
			if strings.Contains(fmt.Sprint(ev.GetReason(), ev.GetDetail(), ev.GetFields()), "lost 3 times") &&
				strings.Contains(fmt.Sprint(ev.GetReason(), ev.GetDetail()), "staying drained") {
				return true
			}
		}
		return false
	})
	for _, u := range acmes {
		if g := lab.gpu("p1", u); g.GetState() != "drain" {
			t.Errorf("%s of the flapping adapter returned: %v", u, g)
		}
	}
	for _, d := range al.found.Inventory.Devices {
		if g := lab.gpu("p1", d.UUID); g.GetState() == "drain" {
			t.Errorf("H100 %s drained by the flapping adapter: %v", d.UUID, g)
		}
	}
}
