package presets

import (
	"strings"
	"testing"

	"github.com/parityhpc/parity/gres"
)

func TestPartitionedMachines(t *testing.T) {
	tests := []struct {
		name    string
		types   map[string]int // slice type -> count
		parents int            // GPUs that are split
		files   int            // device files of one slice
		prefix  string         // of every slice's own file
	}{
		{"dgx-h100-mig", map[string]int{"1g.10gb": 16, "2g.20gb": 2, "3g.40gb": 2}, 4, 3, "/dev/nvidia"},
		{"dgx-h100-mig-all", map[string]int{"1g.10gb": 32, "2g.20gb": 4, "3g.40gb": 4}, 8, 3, "/dev/nvidia"},
		{"mi300x-cpx", map[string]int{"mi300x.cpx": 64}, 8, 1, "/dev/dri/renderD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := build(t, tc.name, 1)
			inv := discover(t, m)
			byUUID := map[string]gres.Device{}
			for _, d := range inv.Devices {
				byUUID[d.UUID] = d
			}
			types, parents, files := map[string]int{}, map[string]bool{}, map[string]string{}
			for _, d := range inv.Devices {
				if d.Parent == "" {
					continue
				}
				types[d.Type]++
				parents[d.Parent] = true
				p := byUUID[d.Parent]
				if d.NUMANode != p.NUMANode || !d.LocalCPUs.Equal(p.LocalCPUs) || d.PCIBusID != p.PCIBusID {
					t.Errorf("slice %s: numa %d cpus %s bus %s, parent %d %s %s", d.UUID, d.NUMANode, d.LocalCPUs, d.PCIBusID, p.NUMANode, p.LocalCPUs, p.PCIBusID)
				}
				if len(d.Files) != tc.files {
					t.Errorf("slice %s files %v, want %d", d.UUID, d.Files, tc.files)
				}
				own := d.Files[len(d.Files)-1]
				if !strings.Contains(own.Path, strings.TrimPrefix(tc.prefix, "/")[3:]) {
					t.Errorf("slice %s: own file %s", d.UUID, own)
				}
				if other, dup := files[own.Path]; dup {
					t.Errorf("slices %s and %s share %s", other, d.UUID, own.Path)
				}
				files[own.Path] = d.UUID
			}
			if len(parents) != tc.parents {
				t.Errorf("%d split GPUs, want %d", len(parents), tc.parents)
			}
			for typ, n := range tc.types {
				if types[typ] != n {
					t.Errorf("%d slices of %s, want %d (have %v)", types[typ], typ, n, types)
				}
			}
		})
	}
}
