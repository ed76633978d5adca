package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
)

// migInventory is inventory8 with GPUs 4-5 split into seven 1g.10gb
// slices and 6-7 into 3g.40gb + 2g.20gb + 1g.10gb, typed by their
// profile as the NVIDIA driver types them.
func migInventory(name string) gres.Inventory {
	inv := inventory8(name, "h100")
	profiles := map[int][]string{4: {"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"},
		5: {"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"},
		6: {"3g.40gb", "2g.20gb", "1g.10gb"}, 7: {"3g.40gb", "2g.20gb", "1g.10gb"}}
	next := 8
	for gpu := 4; gpu < 8; gpu++ {
		parent := inv.Devices[gpu]
		for k, p := range profiles[gpu] {
			inv.Devices = append(inv.Devices, gres.Device{UUID: fmt.Sprintf("%s-mig%d.%d", name, gpu, k), Type: p,
				Index: next, NUMANode: parent.NUMANode, LocalCPUs: parent.LocalCPUs, Parent: parent.UUID, Partition: p})
			next++
		}
	}
	return inv
}

// cpxInventory is an 8-GPU box with every GPU in CPX mode: 8 parents and
// 64 partitions typed as the AMD driver types them ("mi300x.cpx").
func cpxInventory(name string) gres.Inventory {
	inv := inventory8(name, "mi300x")
	for gpu := range 8 {
		parent := inv.Devices[gpu]
		for k := range 8 {
			inv.Devices = append(inv.Devices, gres.Device{UUID: fmt.Sprintf("%s-cpx%d.%d", name, gpu, k), Type: "mi300x.cpx",
				Index: 8 + gpu*8 + k, NUMANode: parent.NUMANode, LocalCPUs: parent.LocalCPUs, Parent: parent.UUID, Partition: "cpx"})
		}
	}
	return inv
}

func TestPartitionedShapeLeavesOutSplitGPUs(t *testing.T) {
	tests := []struct {
		name  string
		inv   gres.Inventory
		want  int
		split []string
	}{
		{"mig", migInventory("m"), 4 + 14 + 6, []string{"m-gpu4", "m-gpu5", "m-gpu6", "m-gpu7"}},
		{"cpx: 72 devices, 64 schedulable", cpxInventory("c"), 64, []string{"c-gpu0", "c-gpu7"}},
		{"no partitions", inventory8("w", "h100"), 8, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := NodeFromInventory("n", tc.inv)
			if err != nil {
				t.Fatal(err)
			}
			if len(n.DeviceUUIDs) != tc.want || len(n.Shape.Devices) != tc.want {
				t.Fatalf("%d uuids, %d slots, want %d", len(n.DeviceUUIDs), len(n.Shape.Devices), tc.want)
			}
			for _, u := range tc.split {
				if deviceIndex(&n, u) >= 0 {
					t.Errorf("split GPU %s is schedulable", u)
				}
			}
		})
	}
}

func TestPartitionRequests(t *testing.T) {
	tests := []struct {
		name   string
		inv    gres.Inventory
		typ    string
		count  int
		prefix string // every device given starts with it
		start  bool
	}{
		{"gres=gpu:1g.10gb:2 takes slices", migInventory("n1"), "1g.10gb", 2, "n1-mig", true},
		{"gpus=3g.40gb:1", migInventory("n1"), "3g.40gb", 1, "n1-mig", true},
		{"three 3g.40gb: the node has two", migInventory("n1"), "3g.40gb", 3, "", false},
		{"all 16 1g.10gb", migInventory("n1"), "1g.10gb", 16, "n1-mig", true},
		{"whole h100: only the 4 unsplit", migInventory("n1"), "h100", 4, "n1-gpu", true},
		{"five whole h100 never take a split GPU", migInventory("n1"), "h100", 5, "", false},
		{"AMD partitions by the driver's type", cpxInventory("n1"), "mi300x.cpx", 8, "n1-cpx", true},
		{"all 64 AMD partitions", cpxInventory("n1"), "mi300x.cpx", 64, "n1-cpx", true},
		{"whole mi300x on a CPX box", cpxInventory("n1"), "mi300x", 1, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := NodeFromInventory("n1", tc.inv)
			if err != nil {
				t.Fatal(err)
			}
			snap := snapshot(n)
			snap.Jobs = []Job{job(1, 1, tc.count, tc.typ, time.Hour)}
			p := Schedule(snap, DefaultConfig(), t0)
			d := decision(t, p, 1)
			if (d.Action == ActionStart) != tc.start {
				t.Fatalf("action %s (%s), want start=%v", d.Action, d.Detail, tc.start)
			}
			if !tc.start {
				return
			}
			got := p.Starts[0].Nodes[0].Devices
			if len(got) != tc.count {
				t.Fatalf("%d devices, want %d", len(got), tc.count)
			}
			for _, u := range got {
				if !strings.HasPrefix(u, tc.prefix) {
					t.Errorf("device %s is not a %s* device", u, tc.prefix)
				}
			}
		})
	}
}
