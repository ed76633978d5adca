package cluster

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/vendors"
)

// TestSimNodeRestartsInPlace: an agent process restarted on a GPU node
// builds its simulated machine again over the root of its first start,
// whose device files are real character devices by then; it gets the same
// devices, and their files stay character devices.
func TestSimNodeRestartsInPlace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to make device nodes")
	}
	lab, err := labfile.Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b, err := yaml.Marshal(lab)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, LabFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, node := range []string{"h100-1", "mi300x-1"} {
		var first []string
		for start := 1; start <= 2; start++ {
			drivers, closeM, err := SimNode(ctx, dir, node, true)
			if err != nil {
				t.Fatalf("node %s, start %d: %v", node, start, err)
			}
			got := uuids(ctx, t, drivers)
			found, err := vendors.DiscoverAll(ctx, drivers)
			closeM()
			if err != nil {
				t.Fatal(err)
			}
			if start == 1 {
				first = got
			} else if !slices.Equal(got, first) {
				t.Errorf("node %s: the restart finds %v, the first start %v", node, got, first)
			}
			for _, d := range found.Inventory.Devices {
				for _, f := range d.Files {
					if st, err := os.Stat(f.Path); err != nil {
						t.Error(err)
					} else if st.Mode()&os.ModeCharDevice == 0 {
						t.Errorf("node %s, start %d: %s is %v, want a character device", node, start, f.Path, st.Mode())
					}
				}
			}
		}
	}
}
