package launch

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/agent/cgroup/cgrouptest"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// probeScript prints "path=opened" or "path=<strerror>" per file.
const probeScript = cgrouptest.ProbeScript

// The oracle (see cgrouptest) reads an open's outcome as the cgroup's answer.
const (
	allowed = cgrouptest.Allowed
	eperm   = cgrouptest.EPERM
)

func verdict(res string) string { return cgrouptest.Verdict(res) }

// probe runs probeScript over files as a job with the prepared devices and
// returns the outcome per file.
func probe(t *testing.T, e *env, id uint64, p vendors.Prepared, gpus []string, files []string) (map[string]string, map[string]string) {
	t.Helper()
	s := e.spec(id, probeScript+"env | grep -E '^(CUDA|ROCR|HIP|GPU|NVIDIA)_' | sort\n")
	s.Args = files
	s.AddPrepared(p)
	s.GPUs = gpus
	e.launch(s)
	end := e.waitEnd()
	if end.State != accounting.StateCompleted {
		t.Fatalf("probe job ended %s %s: %s", end.State, end.ExitString(), end.Reason)
	}
	got, env := map[string]string{}, map[string]string{}
	for _, line := range strings.Split(readFile(t, filepath.Join(e.work, fmt.Sprintf("slurm-%d.out", id))), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		if strings.HasPrefix(k, "/") {
			got[k] = verdict(v)
		} else {
			env[k] = v
		}
	}
	return got, env
}

func mknod(t *testing.T, path string, major, minor uint32) {
	t.Helper()
	unix.Unlink(path)
	if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(major, minor))); err != nil {
		t.Fatalf("mknod %s %d:%d: %v", path, major, minor, err)
	}
	if err := unix.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
}

func deviceByIndex(t *testing.T, inv gres.Inventory, index int) gres.Device {
	t.Helper()
	for _, d := range inv.Devices {
		if d.Index == index && d.Parent == "" {
			return d
		}
	}
	t.Fatalf("no whole device with index %d in %d devices", index, len(inv.Devices))
	return gres.Device{}
}

func TestNVIDIAJobSeesOnlyItsGPU(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	m, err := nvmlsim.New(nvmlsim.Config{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(e.base, "nvroot")
	if err := m.WriteRoot(root); err != nil {
		t.Fatal(err)
	}
	// WriteRoot leaves placeholders; real nodes with the real numbers
	// make the cgroup decide.
	for i := range 8 {
		mknod(t, filepath.Join(root, "dev", fmt.Sprintf("nvidia%d", i)), 195, uint32(i))
	}
	mknod(t, filepath.Join(root, "dev/nvidiactl"), 195, 255)
	mknod(t, filepath.Join(root, "dev/nvidia-uvm"), nvmlsim.UVMMajor, 0)
	mknod(t, filepath.Join(root, "dev/nvidia-uvm-tools"), nvmlsim.UVMMajor, 1)
	drv := nvidia.New(m.NVML(), nvidia.WithRoot(root))
	ctx := context.Background()
	inv, err := drv.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gpu := deviceByIndex(t, inv, 2)
	p, err := drv.Prepare(ctx, vendors.Allocation{ID: "31", Devices: []string{gpu.UUID}})
	if err != nil {
		t.Fatal(err)
	}
	dev := func(n string) string { return filepath.Join(root, "dev", n) }
	got, env := probe(t, e, 31, p, []string{gpu.UUID},
		[]string{dev("nvidia2"), dev("nvidiactl"), dev("nvidia-uvm"), dev("nvidia5"), dev("nvidia0"), dev("nvidia7")})
	want := map[string]string{dev("nvidia2"): allowed, dev("nvidiactl"): allowed, dev("nvidia-uvm"): allowed,
		dev("nvidia5"): eperm, dev("nvidia0"): eperm, dev("nvidia7"): eperm}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("open %s inside the job: %q, want %q", f, got[f], w)
		}
	}
	if env["CUDA_VISIBLE_DEVICES"] != p.Env["CUDA_VISIBLE_DEVICES"] || env["CUDA_VISIBLE_DEVICES"] == "" {
		t.Errorf("job saw CUDA_VISIBLE_DEVICES=%q, driver prepared %q", env["CUDA_VISIBLE_DEVICES"], p.Env["CUDA_VISIBLE_DEVICES"])
	}
}

func TestAMDJobSeesOnlyItsRenderNode(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	root := filepath.Join(e.base, "amdroot")
	mach, err := amdsim.Generate(root, amdsim.Config{Seed: 7, DeviceNodes: true})
	if err != nil {
		t.Fatal(err)
	}
	drv := amd.New(root)
	ctx := context.Background()
	inv, err := drv.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gpu := deviceByIndex(t, inv, 2)
	p, err := drv.Prepare(ctx, vendors.Allocation{ID: "32", Devices: []string{gpu.UUID}})
	if err != nil {
		t.Fatal(err)
	}
	render := func(i int) string {
		return filepath.Join(root, "dev/dri", fmt.Sprintf("renderD%d", mach.GPUs[i].RenderMinor))
	}
	kfd := filepath.Join(root, "dev/kfd")
	got, env := probe(t, e, 32, p, []string{gpu.UUID}, []string{render(2), kfd, render(5), render(0)})
	want := map[string]string{render(2): allowed, kfd: allowed, render(5): eperm, render(0): eperm}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("open %s inside the job: %q, want %q", f, got[f], w)
		}
	}
	if env["ROCR_VISIBLE_DEVICES"] == "" || env["ROCR_VISIBLE_DEVICES"] != p.Env["ROCR_VISIBLE_DEVICES"] {
		t.Errorf("job saw ROCR_VISIBLE_DEVICES=%q, driver prepared %q", env["ROCR_VISIBLE_DEVICES"], p.Env["ROCR_VISIBLE_DEVICES"])
	}
}
