package amd_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/vendors/amd"
)

// newSwitchable is a machine whose sysfs writes reach the simulator's
// store handlers, as a write reaches the kernel's.
func newSwitchable(t *testing.T, cfg amdsim.Config) (*amdsim.Machine, *amd.Driver) {
	t.Helper()
	root := t.TempDir()
	m, err := amdsim.Generate(root, cfg)
	if err != nil {
		t.Fatalf("amdsim.Generate: %v", err)
	}
	return m, amd.New(root, amd.WithLogger(quiet), amd.WithAttrWriter(m.WriteAttr))
}

// childrenOf lists the partitions of gpu in index order.
func childrenOf(inv gres.Inventory, gpu string) []gres.Device {
	var out []gres.Device
	for _, d := range inv.Devices {
		if d.Parent == gpu {
			out = append(out, d)
		}
	}
	return out
}

// files is every device file of inv's devices other than gpu and its
// partitions, by device UUID.
func othersFiles(inv gres.Inventory, gpu string) map[string][]gres.DeviceFile {
	out := map[string][]gres.DeviceFile{}
	for _, d := range inv.Devices {
		if d.UUID != gpu && d.Parent != gpu {
			out[d.UUID] = d.Files
		}
	}
	return out
}

func TestRepartitionSwitchesOneGPUsMode(t *testing.T) {
	ctx := context.Background()
	m, d := newSwitchable(t, amdsim.Config{Seed: 3, GPUs: 3, Host: smallHost(1)})
	before := discover(t, d)
	gpu := before.Devices[2].UUID
	others := othersFiles(before, gpu)

	if err := d.Repartition(ctx, gpu, []string{"cpx"}); err != nil {
		t.Fatalf("Repartition cpx: %v", err)
	}
	inv := discover(t, d)
	parts := childrenOf(inv, gpu)
	if len(parts) != 8 {
		t.Fatalf("GPU %s has %d partitions after CPX, want 8: %+v", gpu, len(parts), parts)
	}
	seen := map[string]bool{}
	for _, f := range before.Devices[0].Files {
		seen[f.Path] = true
	}
	for k, p := range parts {
		if p.Type != "mi300x.cpx" || len(p.Files) != 1 || seen[p.Files[0].Path] {
			t.Errorf("partition %d: type %q files %v; want mi300x.cpx on a render node of its own", k, p.Type, p.Files)
		}
		if len(p.Files) == 1 {
			if _, err := os.Stat(p.Files[0].Path); err != nil {
				t.Errorf("partition %d's render node: %v", k, err)
			}
			seen[p.Files[0].Path] = true
		}
	}
	if got := othersFiles(inv, gpu); !equalFiles(got, others) {
		t.Errorf("the other GPUs' devices changed: %v, were %v", got, others)
	}
	if got := m.GPUs[2].ComputePartition; got != "cpx" {
		t.Errorf("simulator GPU 2 in %q, want cpx", got)
	}

	// Spelled out as the types Discover reports, then back to whole.
	if err := d.Repartition(ctx, gpu, []string{"mi300x.dpx", "mi300x.dpx"}); err != nil {
		t.Fatalf("Repartition 2x mi300x.dpx: %v", err)
	}
	if parts := childrenOf(discover(t, d), gpu); len(parts) != 2 || parts[0].Type != "mi300x.dpx" {
		t.Fatalf("after DPX: %+v", parts)
	}
	if err := d.Repartition(ctx, gpu, nil); err != nil {
		t.Fatalf("Repartition whole: %v", err)
	}
	inv = discover(t, d)
	if parts := childrenOf(inv, gpu); len(parts) != 0 {
		t.Fatalf("after SPX the GPU still has partitions: %+v", parts)
	}
	if dev, _ := inv.Device(gpu); len(dev.Files) != 1 || dev.Files[0] != before.Devices[2].Files[0] {
		t.Errorf("whole GPU files %v, want its own render node %v", dev.Files, before.Devices[2].Files)
	}
}

func TestRepartitionLowersTheMemoryModeItNeedsTo(t *testing.T) {
	ctx := context.Background()
	m, d := newSwitchable(t, amdsim.Config{Seed: 4, GPUs: 2, Host: smallHost(2), ComputePartition: "cpx", MemoryPartition: "nps4"})
	gpu := discover(t, d).Devices[1].UUID
	if err := d.Repartition(ctx, gpu, []string{"dpx"}); err != nil {
		t.Fatalf("Repartition dpx from CPX/NPS4: %v", err)
	}
	inv := discover(t, d)
	dev, _ := inv.Device(gpu)
	if got := dev.Attributes["memory_partition"]; got != "nps1" {
		t.Errorf("memory partition %q after DPX, want nps1 (DPX does not run over NPS4)", got)
	}
	if n := len(childrenOf(inv, gpu)); n != 2 {
		t.Errorf("%d partitions, want 2", n)
	}
	if m.GPUs[0].MemoryPartition != "nps4" || len(childrenOf(inv, inv.Devices[0].UUID)) != 8 {
		t.Errorf("GPU 0 changed: %s, %d partitions", m.GPUs[0].MemoryPartition, len(childrenOf(inv, inv.Devices[0].UUID)))
	}
}

func TestRepartitionRefusesBeforeChangingAnything(t *testing.T) {
	ctx := context.Background()
	m, d := newSwitchable(t, amdsim.Config{Seed: 5, GPUs: 2, Host: smallHost(1), ComputePartition: "cpx"})
	inv := discover(t, d)
	gpu := inv.Devices[0].UUID
	part := childrenOf(inv, gpu)[0].UUID
	tests := []struct {
		name, uuid string
		layout     []string
		want       string
	}{
		{"a partition", part, []string{"spx"}, "not a whole GPU"},
		{"unknown GPU", "GPU-nope", nil, "not a whole GPU"},
		{"not a mode", gpu, []string{"1g.10gb"}, `"1g.10gb" is not a compute partition mode`},
		{"two modes", gpu, []string{"dpx", "cpx"}, "runs one mode"},
		{"wrong count", gpu, []string{"mi300x.cpx", "mi300x.cpx", "mi300x.cpx"}, "mode cpx makes 8"},
		{"not offered", gpu, []string{"tpx"}, "mode tpx is not one it offers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := d.Repartition(ctx, tc.uuid, tc.layout)
			if !errors.Is(err, amd.ErrLayout) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrLayout mentioning %q", err, tc.want)
			}
			b, _ := os.ReadFile(filepath.Join(m.GPUs[0].DeviceDir, "current_compute_partition"))
			if strings.TrimSpace(string(b)) != "CPX" {
				t.Fatalf("current_compute_partition is %q after a refusal", b)
			}
		})
	}
	_, single := newSwitchable(t, amdsim.Config{Seed: 5, Model: "mi210", GPUs: 1, Host: smallHost(1)})
	whole := discover(t, single).Devices[0].UUID
	if err := single.Repartition(ctx, whole, []string{"cpx"}); !errors.Is(err, amd.ErrLayout) || !strings.Contains(err.Error(), "offers no compute partition modes") {
		t.Fatalf("MI210 re-partition: %v, want a refusal naming the missing modes", err)
	}
}

func equalFiles(a, b map[string][]gres.DeviceFile) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
