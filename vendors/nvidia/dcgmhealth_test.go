package nvidia_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// watchingDCGM is a DCGM with health watches: it reports one incident per
// GPU it was asked to watch, then waits for the end of the watch.
type watchingDCGM struct {
	fakeDCGM
	uuids    chan []string
	returned chan struct{}
}

func (f *watchingDCGM) WatchHealth(ctx context.Context, uuids []string, emit func(gres.Condition)) error {
	f.uuids <- slices.Clone(uuids)
	emit(gres.Condition{UUID: uuids[0], Time: epoch, Kind: "dcgm", Code: "memory", Severity: gres.SeverityFatal,
		Action: healthcheck.RemedyReset, Message: "DCGM memory watch failure: row remap failed"})
	<-ctx.Done()
	close(f.returned)
	return nil
}

func TestDCGMHealthWatchFeedsTheDriversConditions(t *testing.T) {
	dcgm := &watchingDCGM{uuids: make(chan []string, 1), returned: make(chan struct{})}
	r := newRig(t, nvmlsim.Config{Seed: 5}, nvidia.WithDCGM(dcgm))
	r.discover(t)
	conds, stop := watch(t, r)
	got := <-dcgm.uuids
	if want := r.m.UUIDs(); !slices.Equal(got, want) {
		t.Fatalf("DCGM asked to watch %v, want the whole GPUs %v", got, want)
	}
	if c := await(t, conds); c.Kind != "dcgm" || c.UUID != got[0] || c.Severity != gres.SeverityFatal {
		t.Fatalf("condition %+v, want the DCGM incident", c)
	}
	// NVML events keep flowing beside DCGM.
	if err := r.m.InjectXID(2, 48); err != nil {
		t.Fatal(err)
	}
	if c := await(t, conds); c.Kind != "xid" || c.Code != "48" {
		t.Fatalf("condition %+v, want XID 48", c)
	}
	if err := stop(); err != nil {
		t.Fatalf("watch returned %v", err)
	}
	select {
	case <-dcgm.returned:
	default:
		t.Fatal("WatchHealth returned before the DCGM watch did")
	}
}

// brokenDCGM's health watch fails at once (DCGM manages none of the GPUs).
type brokenDCGM struct{ fakeDCGM }

func (brokenDCGM) WatchHealth(context.Context, []string, func(gres.Condition)) error {
	return errors.New("nvdcgm: watch health: DCGM manages none of the 8 GPUs")
}

func TestFailingDCGMWatchLeavesNVMLEvents(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []nvidia.Option
	}{
		{"no DCGM", nil},
		{"DCGM without health watches", []nvidia.Option{nvidia.WithDCGM(&fakeDCGM{})}},
		{"DCGM watch fails", []nvidia.Option{nvidia.WithDCGM(&brokenDCGM{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nvmlsim.Config{Seed: 6}, tc.opts...)
			conds, stop := watch(t, r)
			if err := r.m.InjectXID(0, 79); err != nil {
				t.Fatal(err)
			}
			if c := await(t, conds); c.Kind != "xid" || c.Code != "79" {
				t.Fatalf("condition %+v, want XID 79", c)
			}
			if err := stop(); err != nil {
				t.Fatalf("watch returned %v", err)
			}
		})
	}
}
