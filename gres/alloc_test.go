package gres

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/parityhpc/parity/topology"
)

// testInventory is an 8-GPU node: two NVLink islands of four, NUMA 0 for
// GPUs 0-3 and NUMA 1 for 4-7, plus one MIG-style partition of GPU 7.
func testInventory() Inventory {
	var inv Inventory
	for i := 0; i < 8; i++ {
		numa := i / 4
		inv.Devices = append(inv.Devices, Device{
			UUID: uuidOf(i), Type: "h100", Index: i, NUMANode: numa,
			LocalCPUs: topology.CPURange(numa*16, numa*16+15),
			Files:     []DeviceFile{{Path: "/dev/nvidia" + string(rune('0'+i)), Major: 195, Minor: uint32(i)}},
		})
	}
	for i := range inv.Devices {
		for j := range inv.Devices {
			if i != j && i/4 == j/4 {
				inv.Devices[i].Links = append(inv.Devices[i].Links, Link{Peer: uuidOf(j), Kind: "nvlink", Class: topology.ClassFabric, Lanes: 6})
			}
		}
	}
	inv.Devices = append(inv.Devices, Device{UUID: "MIG-7a", Type: "h100_3g.40gb", Index: 8, Parent: uuidOf(7), Partition: "3g.40gb", NUMANode: 1})
	return inv
}

func uuidOf(i int) string { return "GPU-" + string(rune('a'+i)) }

func TestInventoryValidate(t *testing.T) {
	if err := testInventory().Validate(); err != nil {
		t.Fatalf("valid inventory: %v", err)
	}
	bad := testInventory()
	bad.Devices[1].UUID = bad.Devices[0].UUID
	if err := bad.Validate(); err == nil {
		t.Error("duplicate uuid accepted")
	}
	bad = testInventory()
	bad.Devices[0].Links = append(bad.Devices[0].Links, Link{Peer: "GPU-nope"})
	if err := bad.Validate(); err == nil {
		t.Error("link to unknown peer accepted")
	}
	bad = testInventory()
	bad.Devices[8].Parent = "GPU-nope"
	if err := bad.Validate(); err == nil {
		t.Error("partition of unknown parent accepted")
	}
}

func TestInventoryGraphIslands(t *testing.T) {
	got := testInventory().Graph().Islands()
	want := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("islands = %v, want %v", got, want)
	}
}

func TestAllocateNeverDoubleBooks(t *testing.T) {
	n := NewNodeAllocations(testInventory())
	if err := n.Allocate("job1", []string{uuidOf(0), uuidOf(1)}); err != nil {
		t.Fatal(err)
	}
	if err := n.Allocate("job1", []string{uuidOf(0), uuidOf(1)}); err != nil {
		t.Errorf("replaying the same allocation: %v", err)
	}
	err := n.Allocate("job2", []string{uuidOf(2), uuidOf(1)})
	if !errors.Is(err, ErrAllocated) {
		t.Fatalf("overlapping allocation error = %v, want ErrAllocated", err)
	}
	if n.Owner(uuidOf(2)) != "" {
		t.Error("a failed allocation must leave no device held (all or none)")
	}
	if err := n.Allocate("job2", []string{"GPU-zzz"}); !errors.Is(err, ErrUnknownDevice) {
		t.Errorf("unknown device error = %v", err)
	}
	if got := n.Release("job1"); !reflect.DeepEqual(got, []string{uuidOf(0), uuidOf(1)}) {
		t.Errorf("Release = %v", got)
	}
	if got := n.Release("job1"); got != nil {
		t.Errorf("second Release = %v, want nil", got)
	}
}

func TestDrainedDeviceIsNeverAllocated(t *testing.T) {
	n := NewNodeAllocations(testInventory())
	if err := n.Drain(uuidOf(5), "xid 79"); err != nil {
		t.Fatal(err)
	}
	if err := n.Allocate("job", []string{uuidOf(5)}); !errors.Is(err, ErrDrained) {
		t.Errorf("allocating a drained GPU: %v, want ErrDrained", err)
	}
	free := n.Free("h100")
	if len(free) != 7 {
		t.Errorf("free h100 = %v, want the 7 undrained", free)
	}
	got, _, err := n.Select("h100", 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{uuidOf(0), uuidOf(1), uuidOf(2), uuidOf(3)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Select 4 with GPU 5 drained = %v, want the intact island %v", got, want)
	}
	if _, _, err := n.Select("h100", 8); !errors.Is(err, ErrInsufficient) {
		t.Errorf("Select 8 of 7: %v", err)
	}
	if err := n.Resume(uuidOf(5)); err != nil || len(n.Free("h100")) != 8 {
		t.Errorf("Resume: %v, free %d", err, len(n.Free("h100")))
	}
	if err := n.Drain("GPU-zzz", "x"); !errors.Is(err, ErrUnknownDevice) {
		t.Errorf("drain unknown: %v", err)
	}
}

func TestPartitionAndParentExcludeEachOther(t *testing.T) {
	n := NewNodeAllocations(testInventory())
	if err := n.Allocate("mig-job", []string{"MIG-7a"}); err != nil {
		t.Fatal(err)
	}
	if err := n.Allocate("whole", []string{uuidOf(7)}); !errors.Is(err, ErrAllocated) {
		t.Errorf("whole GPU while its partition is held: %v", err)
	}
	n.Release("mig-job")
	if err := n.Allocate("whole", []string{uuidOf(7)}); err != nil {
		t.Fatal(err)
	}
	if free := n.Free("h100_3g.40gb"); len(free) != 0 {
		t.Errorf("partition free while parent held: %v", free)
	}
}

func TestSelectReturnsLocalCPUs(t *testing.T) {
	n := NewNodeAllocations(testInventory())
	_ = n.Allocate("a", []string{uuidOf(0), uuidOf(1), uuidOf(2)})
	got, cpus, err := n.Select("h100", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{uuidOf(4), uuidOf(5)}) || cpus.String() != "16-31" {
		t.Errorf("Select 2 = %v cpus %q; want GPUs 4,5 on NUMA 1 (island with room), cpus 16-31", got, cpus)
	}
}

// Select places as the scheduler does: a GPU split into partitions (GPU 7
// has a MIG slice) is chosen only through them, never whole.
func TestSelectNeverPicksASplitGPUWhole(t *testing.T) {
	n := NewNodeAllocations(testInventory())
	got, _, err := n.Select("h100", 4)
	if err != nil || !reflect.DeepEqual(got, []string{uuidOf(0), uuidOf(1), uuidOf(2), uuidOf(3)}) {
		t.Fatalf("Select 4 = %v, %v", got, err)
	}
	if got, _, err := n.Select("", 8); err != nil || slices.Contains(got, uuidOf(7)) || !slices.Contains(got, "MIG-7a") {
		t.Errorf("Select 8 of any type = %v, %v; want the 7 whole GPUs and GPU 7's slice, not GPU 7", got, err)
	}
	if _, _, err := n.Select("h100", 8); !errors.Is(err, ErrInsufficient) {
		t.Errorf("Select 8 h100 = %v, want ErrInsufficient (7 whole GPUs)", err)
	}
	if got, _, err := n.Select("h100_3g.40gb", 1); err != nil || !reflect.DeepEqual(got, []string{"MIG-7a"}) {
		t.Errorf("Select the slice = %v, %v", got, err)
	}
}
