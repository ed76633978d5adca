package nvidia_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// slicesOf lists the types of a GPU's partitions in index order.
func slicesOf(inv gres.Inventory, parent string) (types, uuids []string) {
	for _, d := range inv.Devices {
		if d.Parent == parent {
			types = append(types, d.Type)
			uuids = append(uuids, d.UUID)
		}
	}
	return types, uuids
}

// Re-partitioning goes through NVML's own instance calls: the next
// discovery reports the new layout with new MIG UUIDs and capability
// files, the GPU keeps its UUID, other GPUs keep theirs, and an empty
// layout returns the GPU whole (MIG off).
func TestRepartitionChangesTheLayout(t *testing.T) {
	r := newRig(t, nvmlsim.Config{Seed: 9, MIG: map[int][]string{2: {"3g.40gb", "2g.20gb", "1g.10gb"}, 5: {"7g.80gb"}}})
	ctx := context.Background()
	before := r.discover(t)
	gpu := before.Devices[2].UUID
	_, oldUUIDs := slicesOf(before, gpu)
	_, other := slicesOf(before, before.Devices[5].UUID)
	seven := slices.Repeat([]string{"1g.10gb"}, 7)
	steps := []struct {
		layout []string
		want   []string
	}{
		{seven, seven},
		{[]string{"4g.40gb", "3g.40gb"}, []string{"4g.40gb", "3g.40gb"}},
		{nil, nil},
		{[]string{"2g.20gb"}, []string{"2g.20gb"}},
	}
	for _, st := range steps {
		if err := r.d.Repartition(ctx, gpu, st.layout); err != nil {
			t.Fatalf("Repartition(%v): %v", st.layout, err)
		}
		inv := r.discover(t)
		if err := inv.Validate(); err != nil {
			t.Fatal(err)
		}
		types, uuids := slicesOf(inv, gpu)
		if !slices.Equal(types, st.want) {
			t.Fatalf("after %v: slices %v, want %v", st.layout, types, st.want)
		}
		if inv.Devices[2].UUID != gpu {
			t.Fatalf("the GPU's UUID changed: %s", inv.Devices[2].UUID)
		}
		if _, still := slicesOf(inv, before.Devices[5].UUID); !slices.Equal(still, other) {
			t.Fatalf("GPU 5's slices changed: %v, want %v", still, other)
		}
		for _, u := range uuids {
			if slices.Contains(oldUUIDs, u) {
				t.Errorf("after %v: slice %s kept an old UUID", st.layout, u)
			}
		}
		for _, d := range inv.Devices {
			if d.Parent == gpu && len(d.Files) != 3 {
				t.Errorf("after %v: slice %s files %v, want the GPU's node and two capability nodes", st.layout, d.UUID, d.Files)
			}
		}
		if mig := inv.Devices[2].Attributes["mig"]; (mig == "enabled") != (len(st.want) > 0) {
			t.Errorf("after %v: parent mig attribute %q", st.layout, mig)
		}
		oldUUIDs = uuids
	}
}

// A layout the GPU cannot hold is refused, naming the GPU and the
// profile, and nothing changes.
func TestRepartitionRefusesBadLayouts(t *testing.T) {
	r := newRig(t, nvmlsim.Config{Seed: 9, MIG: map[int][]string{2: {"3g.40gb", "2g.20gb", "1g.10gb"}}})
	ctx := context.Background()
	before := r.discover(t)
	gpu := before.Devices[2].UUID
	wantTypes, wantUUIDs := slicesOf(before, gpu)
	tests := []struct {
		name   string
		uuid   string
		layout []string
		want   string
	}{
		{"unknown profile", gpu, []string{"5g.50gb"}, `"5g.50gb" is not a profile`},
		{"too many slices", gpu, slices.Repeat([]string{"2g.20gb"}, 4), "needs 8 compute slices, the GPU has 7"},
		{"a MIG device", wantUUIDs[0], []string{"1g.10gb"}, "is not a whole GPU"},
		{"unknown GPU", "GPU-nope", nil, "is not a whole GPU"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := r.d.Repartition(ctx, tc.uuid, tc.layout)
			if !errors.Is(err, nvidia.ErrLayout) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Repartition = %v, want ErrLayout saying %q", err, tc.want)
			}
			types, uuids := slicesOf(r.discover(t), gpu)
			if !slices.Equal(types, wantTypes) || !slices.Equal(uuids, wantUUIDs) {
				t.Fatalf("a refused layout changed the GPU: %v %v", types, uuids)
			}
		})
	}
}
