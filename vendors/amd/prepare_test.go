package amd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
)

func TestInfo(t *testing.T) {
	info := amd.New("/").Info()
	if info.Name != "amd" || info.Vendor != "amd" {
		t.Fatalf("Info = %+v", info)
	}
	if !reflect.DeepEqual(info.VisibleDevicesEnv, []string{"ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"}) {
		t.Fatalf("VisibleDevicesEnv = %v", info.VisibleDevicesEnv)
	}
	for _, c := range []vendors.Capability{vendors.CapSamples, vendors.CapHealth, vendors.CapDiagnose, vendors.CapPartitions} {
		if !info.Has(c) {
			t.Errorf("missing capability %s", c)
		}
	}
}

func TestPrepareNonContiguousAllocation(t *testing.T) {
	m, d := newMachine(t, amdsim.Config{Seed: 21})
	inv := discover(t, d)
	ctx := context.Background()
	alloc := vendors.Allocation{ID: "job-42", Devices: []string{inv.Devices[6].UUID, inv.Devices[1].UUID, inv.Devices[4].UUID}}
	p, err := d.Prepare(ctx, alloc)
	if err != nil {
		t.Fatal(err)
	}
	if p.Env["ROCR_VISIBLE_DEVICES"] != "0,1,2" || p.Env["GPU_DEVICE_ORDINAL"] != "0,1,2" {
		t.Errorf("env = %v, want local ordinals 0,1,2", p.Env)
	}
	want := []gres.DeviceFile{inv.Devices[1].Files[0], inv.Devices[4].Files[0], inv.Devices[6].Files[0],
		{Path: filepath.Join(m.Root, "dev/kfd"), Major: m.Config.KFDMajor}}
	if !reflect.DeepEqual(p.DeviceFiles, want) {
		t.Errorf("device files = %v, want %v", p.DeviceFiles, want)
	}
	again, err := d.Prepare(ctx, vendors.Allocation{ID: "job-42", Devices: []string{inv.Devices[4].UUID, inv.Devices[6].UUID, inv.Devices[1].UUID}})
	if err != nil || !reflect.DeepEqual(again, p) {
		t.Errorf("second Prepare = %v, %v; want the same data", again, err)
	}
	if _, err := d.Prepare(ctx, vendors.Allocation{ID: "job-42", Devices: []string{inv.Devices[0].UUID}}); !errors.Is(err, amd.ErrPrepared) {
		t.Errorf("re-prepare with other devices: err = %v, want ErrPrepared", err)
	}
	if err := d.Release(ctx, "job-42"); err != nil {
		t.Fatal(err)
	}
	if err := d.Release(ctx, "job-42"); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	p0, err := d.Prepare(ctx, vendors.Allocation{ID: "job-42", Devices: []string{inv.Devices[0].UUID}})
	if err != nil || p0.Env["ROCR_VISIBLE_DEVICES"] != "0" || len(p0.DeviceFiles) != 2 {
		t.Errorf("after release, Prepare = %v, %v", p0, err)
	}
}

func TestPrepareErrors(t *testing.T) {
	_, d := newMachine(t, amdsim.Config{GPUs: 2})
	ctx := context.Background()
	if _, err := d.Prepare(ctx, vendors.Allocation{ID: "j", Devices: []string{"GPU-nope"}}); !errors.Is(err, gres.ErrUnknownDevice) {
		t.Errorf("unknown device: err = %v", err)
	}
	if _, err := d.Prepare(ctx, vendors.Allocation{Devices: nil}); err == nil {
		t.Error("empty id must fail")
	}
	p, err := d.Prepare(ctx, vendors.Allocation{ID: "cpu-only"})
	if err != nil || len(p.Env) != 0 || len(p.DeviceFiles) != 0 {
		t.Errorf("no devices: %v, %v", p, err)
	}
}

func TestPreparePartitions(t *testing.T) {
	m, d := newMachine(t, amdsim.Config{Seed: 2, GPUs: 4, ComputePartition: "cpx"})
	inv := discover(t, d)
	ctx := context.Background()
	whole, err := d.Prepare(ctx, vendors.Allocation{ID: "whole", Devices: []string{inv.Devices[2].UUID}})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Env["ROCR_VISIBLE_DEVICES"] != "0,1,2,3,4,5,6,7" || len(whole.DeviceFiles) != 9 {
		t.Errorf("whole partitioned GPU: env %v, %d files", whole.Env, len(whole.DeviceFiles))
	}
	for j, p := range m.GPUs[2].Partitions {
		if whole.DeviceFiles[j].Minor != uint32(p.RenderMinor) {
			t.Errorf("file %d = %v, want minor %d", j, whole.DeviceFiles[j], p.RenderMinor)
		}
	}
	// One partition of GPU 3 and one of GPU 0, given in reverse order.
	p3, p0 := inv.Devices[4+3*8+5], inv.Devices[4+0*8+1]
	two, err := d.Prepare(ctx, vendors.Allocation{ID: "two", Devices: []string{p3.UUID, p0.UUID}})
	if err != nil {
		t.Fatal(err)
	}
	want := []gres.DeviceFile{p0.Files[0], p3.Files[0], inv.SharedFiles[0]}
	if two.Env["ROCR_VISIBLE_DEVICES"] != "0,1" || !reflect.DeepEqual(two.DeviceFiles, want) {
		t.Errorf("two partitions: env %v files %v, want %v", two.Env, two.DeviceFiles, want)
	}
}

func TestKFDMajorFromDeviceNode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mknod of character devices needs root")
	}
	m, d := newMachine(t, amdsim.Config{GPUs: 2, DeviceNodes: true, KFDMajor: 509})
	// Point /proc/devices elsewhere so only the device node can supply 509.
	if err := os.WriteFile(filepath.Join(m.Root, "proc/devices"), []byte("Character devices:\n 77 kfd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv := discover(t, d)
	if got := inv.SharedFiles[0]; got.Major != 509 || got.Minor != 0 {
		t.Fatalf("kfd = %v, want 509:0 from the device node", got)
	}
	fi, err := os.Stat(inv.Devices[1].Files[0].Path)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("render node %s is not a character device: %v", inv.Devices[1].Files[0].Path, err)
	}
}

func TestKFDMajorFallbacks(t *testing.T) {
	m, d := newMachine(t, amdsim.Config{GPUs: 1, KFDMajor: 300})
	if got := discover(t, d).SharedFiles[0].Major; got != 300 {
		t.Fatalf("kfd major from /proc/devices = %d, want 300", got)
	}
	if err := os.Remove(filepath.Join(m.Root, "proc/devices")); err != nil {
		t.Fatal(err)
	}
	if got := discover(t, d).SharedFiles[0].Major; got != amd.DefaultKFDMajor {
		t.Fatalf("kfd major without any source = %d, want the default %d", got, amd.DefaultKFDMajor)
	}
}

func TestConcurrentUse(t *testing.T) {
	m, d := newMachine(t, amdsim.Config{Seed: 9, GPUs: 4})
	inv := discover(t, d)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 4; w++ {
		wg.Add(3)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if err := m.SetBusy(w, i*5); err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				samples, err := d.Sample(ctx)
				if err != nil {
					errs <- err
				}
				for _, s := range samples {
					if len(s.Missing) > 0 {
						errs <- fmt.Errorf("sample of %s misses %v while hooks write", s.UUID, s.Missing)
					}
				}
				if _, err := d.Discover(ctx); err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			a := vendors.Allocation{ID: "shared", Devices: []string{inv.Devices[1].UUID}}
			for i := 0; i < 20; i++ {
				if _, err := d.Prepare(ctx, a); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
