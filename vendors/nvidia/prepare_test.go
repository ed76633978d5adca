package nvidia_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/nvidia"
)

func TestPrepareNonContiguous(t *testing.T) {
	r := newRig(t, nvmlsim.Config{Seed: 5, Minors: []int{0, 1, 2, 3, 4, 5, 7, 6}})
	inv := r.discover(t)
	u := r.m.UUIDs()
	ctx := context.Background()
	// Listed out of order on purpose: the env follows bus order.
	a := vendors.Allocation{ID: "job-1", Devices: []string{u[6], u[1], u[3]}}
	p, err := r.d.Prepare(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"CUDA_VISIBLE_DEVICES":   "0,1,2",
		"NVIDIA_VISIBLE_DEVICES": strings.Join([]string{u[1], u[3], u[6]}, ","),
	}
	if !reflect.DeepEqual(p.Env, want) {
		t.Errorf("env %v, want %v", p.Env, want)
	}
	var paths []string
	for _, f := range p.DeviceFiles {
		paths = append(paths, strings.TrimPrefix(f.Path, r.root))
	}
	wantPaths := []string{"/dev/nvidia1", "/dev/nvidia3", "/dev/nvidia7", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}
	if !reflect.DeepEqual(paths, wantPaths) {
		t.Errorf("files %v, want %v", paths, wantPaths)
	}
	if p.DeviceFiles[2].Minor != 7 {
		t.Errorf("GPU 6 file %v: minor must come from NVML (7), not the index", p.DeviceFiles[2])
	}

	again, err := r.d.Prepare(ctx, vendors.Allocation{ID: "job-1", Devices: []string{u[3], u[6], u[1]}})
	if err != nil || !reflect.DeepEqual(again, p) {
		t.Fatalf("second prepare = %+v, %v; want the same as the first", again, err)
	}
	again.Env["CUDA_VISIBLE_DEVICES"] = "tampered"
	if third, _ := r.d.Prepare(ctx, a); third.Env["CUDA_VISIBLE_DEVICES"] != "0,1,2" {
		t.Fatal("a caller's change leaked into the driver's record")
	}
	if _, err := r.d.Prepare(ctx, vendors.Allocation{ID: "job-1", Devices: []string{u[0]}}); err == nil {
		t.Fatal("same id, other devices: no error")
	}
	if err := r.d.Release(ctx, "job-1"); err != nil {
		t.Fatal(err)
	}
	if err := r.d.Release(ctx, "job-1"); err != nil {
		t.Fatalf("second release: %v", err)
	}
	if _, err := r.d.Prepare(ctx, vendors.Allocation{ID: "job-1", Devices: []string{u[0]}}); err != nil {
		t.Fatalf("prepare after release: %v", err)
	}
	_ = inv
}

func TestPrepareRejects(t *testing.T) {
	r := newRig(t, nvmlsim.Config{MIG: map[int][]string{4: {"7g.80gb"}}})
	r.discover(t)
	u := r.m.UUIDs()
	mig := r.m.MIGUUIDs(4)[0]
	for name, tc := range map[string]struct {
		a    vendors.Allocation
		want string
	}{
		"unknown uuid": {vendors.Allocation{ID: "a", Devices: []string{u[0], "GPU-nope"}}, `"GPU-nope"`},
		"duplicate":    {vendors.Allocation{ID: "b", Devices: []string{u[0], u[0]}}, "twice"},
		"parent+mig":   {vendors.Allocation{ID: "c", Devices: []string{u[4], mig}}, "MIG"},
		"empty id":     {vendors.Allocation{Devices: []string{u[0]}}, "id"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := r.d.Prepare(context.Background(), tc.a)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("prepare = %v, want an error mentioning %s", err, tc.want)
			}
		})
	}
	_, err := r.d.Prepare(context.Background(), vendors.Allocation{ID: "d", Devices: []string{"GPU-nope"}})
	if !errors.Is(err, nvidia.ErrUnknownDevice) {
		t.Fatalf("unknown uuid error %v does not wrap ErrUnknownDevice", err)
	}
}

func TestPrepareMIG(t *testing.T) {
	r := newRig(t, nvmlsim.Config{MIG: map[int][]string{4: {"3g.40gb", "3g.40gb"}}})
	r.discover(t)
	u, mig := r.m.UUIDs(), r.m.MIGUUIDs(4)
	p, err := r.d.Prepare(context.Background(), vendors.Allocation{ID: "m", Devices: []string{mig[1], u[2]}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Env["CUDA_VISIBLE_DEVICES"], "0,"+mig[1]; got != want {
		t.Errorf("CUDA_VISIBLE_DEVICES %q, want %q", got, want)
	}
	var caps int
	for _, f := range p.DeviceFiles {
		if filepath.Dir(f.Path) == filepath.Join(r.root, "dev/nvidia-caps") {
			caps++
			if f.Major != nvmlsim.CapsMajor {
				t.Errorf("cap file %v has major %d", f, f.Major)
			}
		}
	}
	if caps != 2 {
		t.Errorf("%d MIG capability files, want the GI and CI nodes of one instance", caps)
	}
}
