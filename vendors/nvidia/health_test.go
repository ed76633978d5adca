package nvidia_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// watch runs WatchHealth in the background, feeding conditions to a
// channel, and returns once every GPU is registered for XID events (events
// raised earlier would be lost, as on hardware). stop cancels the watch
// and returns what WatchHealth returned.
func watch(t *testing.T, r *rig) (<-chan gres.Condition, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conds := make(chan gres.Condition, 64)
	errc := make(chan error, 1)
	go func() { errc <- r.d.WatchHealth(ctx, func(c gres.Condition) { conds <- c }) }()
	wait, done := context.WithTimeout(context.Background(), 10*time.Second)
	defer done()
	for gpu := range len(r.m.UUIDs()) {
		if err := r.m.WaitRegistered(wait, gpu, nvml.EventTypeXidCriticalError); err != nil {
			cancel()
			t.Fatal(err)
		}
	}
	return conds, func() error { cancel(); return <-errc }
}

// await returns the next condition; the timeout only bounds a broken test.
func await(t *testing.T, conds <-chan gres.Condition) gres.Condition {
	t.Helper()
	select {
	case c := <-conds:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no condition arrived")
	}
	return gres.Condition{}
}

func TestXID79IsFatal(t *testing.T) {
	r := newRig(t, nvmlsim.Config{Seed: 11})
	r.discover(t)
	conds, stop := watch(t, r)
	if err := r.m.InjectXID(5, 79); err != nil {
		t.Fatal(err)
	}
	c := await(t, conds)
	want := gres.Condition{UUID: r.m.UUIDs()[5], Time: epoch, Kind: "xid", Code: "79", Severity: gres.SeverityFatal,
		Action: healthcheck.RemedyReboot, Message: "XID 79: GPU has fallen off the bus",
		// The driver names the telemetry gauge an XID sets (dcgm-exporter's).
		Metric: gres.ConditionMetric{Name: "DCGM_FI_DEV_XID_ERRORS", Help: "Value of the last XID error encountered.", Value: 79}}
	if c != want {
		t.Errorf("condition %+v, want %+v", c, want)
	}
	if err := stop(); err != nil {
		t.Fatalf("watch returned %v", err)
	}
}

// TestXIDsFollowTheCatalogue raises each XID the issue names through the
// simulated NVML and expects the condition the driver's table prescribes.
func TestXIDsFollowTheCatalogue(t *testing.T) {
	r := newRig(t, nvmlsim.Config{Seed: 3})
	conds, stop := watch(t, r)
	defer stop()
	for _, xid := range []uint64{48, 63, 64, 74, 79, 92, 94, 95, 119, 120} {
		if err := r.m.InjectXID(1, xid); err != nil {
			t.Fatal(err)
		}
		want := nvidia.ClassifyXID(xid)
		c := await(t, conds)
		if c.Kind != "xid" || c.Code != fmt.Sprint(xid) || c.Severity != want.Severity || c.Action != want.Action ||
			c.Message != fmt.Sprintf("XID %d: %s", xid, want.Meaning) {
			t.Errorf("XID %d: condition %+v, want %+v", xid, c, want)
		}
	}
}

func TestECCAndApplicationXIDs(t *testing.T) {
	r := newRig(t, nvmlsim.Config{}, nvidia.WithXIDOverrides(map[uint64]healthcheck.Class{
		109: {Severity: gres.SeverityInfo, Action: healthcheck.RemedyNone, Meaning: "site says ignore"},
	}))
	conds, stop := watch(t, r)
	defer stop()
	for _, tc := range []struct {
		inject func() error
		kind   string
		code   string
		sev    gres.Severity
	}{
		{func() error { return r.m.InjectXID(1, 13) }, "xid", "13", gres.SeverityInfo},
		{func() error { return r.m.AddECC(6, 0, 1) }, "ecc", "DBE", gres.SeverityFatal},
		{func() error { return r.m.AddECC(6, 4, 0) }, "", "", 0}, // SBE is not watched: next is the XID
		{func() error { return r.m.InjectXID(2, 109) }, "xid", "109", gres.SeverityInfo},
		{func() error { return r.m.InjectXID(2, 999) }, "xid", "999", gres.SeverityWarning},
	} {
		if err := tc.inject(); err != nil {
			t.Fatal(err)
		}
		if tc.kind == "" {
			continue
		}
		c := await(t, conds)
		if c.Kind != tc.kind || c.Code != tc.code || c.Severity != tc.sev {
			t.Errorf("condition %+v, want %s %s %v", c, tc.kind, tc.code, tc.sev)
		}
	}
}

func TestCloseStopsWatchers(t *testing.T) {
	r := newRig(t, nvmlsim.Config{})
	conds, stop := watch(t, r)
	if err := r.d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("watch after close returned %v", err)
	}
	if err := r.m.InjectXID(0, 79); err != nil {
		t.Fatal(err)
	}
	if len(conds) != 0 {
		t.Fatalf("conditions after the watch returned: %v", <-conds)
	}
	if err := r.d.WatchHealth(context.Background(), func(gres.Condition) {}); err == nil {
		t.Fatal("watch on a closed driver did not fail")
	}
}

func TestWatchHealthNeedsEmit(t *testing.T) {
	r := newRig(t, nvmlsim.Config{})
	if err := r.d.WatchHealth(context.Background(), nil); err == nil {
		t.Fatal("nil emit accepted")
	}
}

func TestEventsOnLostAndMIGDevices(t *testing.T) {
	r := newRig(t, nvmlsim.Config{MIG: map[int][]string{6: {"3g.40gb", "4g.40gb"}}})
	conds, stop := watch(t, r)
	defer stop()
	// After falling off the bus the GPU no longer answers GetUUID; the
	// event must still be attributed through the discovered handle.
	if err := r.m.MarkLost(4); err != nil {
		t.Fatal(err)
	}
	if err := r.m.InjectXID(4, 79); err != nil {
		t.Fatal(err)
	}
	if c := await(t, conds); c.UUID != r.m.UUIDs()[4] || c.Code != "79" {
		t.Errorf("lost gpu condition %+v", c)
	}
	if err := r.m.InjectMIGXID(6, 1, 31); err != nil {
		t.Fatal(err)
	}
	if c := await(t, conds); c.UUID != r.m.MIGUUIDs(6)[1] || c.Code != "31" || c.Severity != gres.SeverityInfo {
		t.Errorf("mig condition %+v, want it on %s", c, r.m.MIGUUIDs(6)[1])
	}
}

// After a re-partition the watch names an XID inside a new MIG instance
// by that instance's new UUID, not its parent's nor a vanished slice's:
// the health policy drains the slice that faulted.
func TestEventsAfterRepartitionNameTheNewSlices(t *testing.T) {
	r := newRig(t, nvmlsim.Config{MIG: map[int][]string{6: {"3g.40gb", "4g.40gb"}}})
	conds, stop := watch(t, r)
	defer stop()
	gpu := r.m.UUIDs()[6]
	if err := r.d.Repartition(context.Background(), gpu, slices.Repeat([]string{"1g.10gb"}, 7)); err != nil {
		t.Fatal(err)
	}
	fresh := r.m.MIGUUIDs(6)
	if len(fresh) != 7 {
		t.Fatalf("the simulator holds %d instances after the re-partition, want 7", len(fresh))
	}
	for _, k := range []int{5, 0} {
		if err := r.m.InjectMIGXID(6, k, 31); err != nil {
			t.Fatal(err)
		}
		if c := await(t, conds); c.UUID != fresh[k] || c.Code != "31" {
			t.Errorf("XID in new instance %d: condition on %s, want %s", k, c.UUID, fresh[k])
		}
	}
}
