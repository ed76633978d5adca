package nvmlsim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Dynamic character majors the simulated kernel hands out (the real ones
// vary per boot; drivers must read them from /proc/devices).
const (
	UVMMajor  = 510
	CapsMajor = 508
)

// CapMinor is the nvidia-caps minor of a MIG access file, following the
// layout of /proc/driver/nvidia-caps/mig-minors: config=1, monitor=2, then
// per GPU minor 135 entries, 9 per GPU instance (its access file, then its
// eight compute instances). ci < 0 names the GPU instance's own file.
func CapMinor(gpuMinor, gi, ci int) int {
	m := 3 + gpuMinor*135 + gi*9
	if ci >= 0 {
		m += 1 + ci
	}
	return m
}

// WriteRoot lays out, under dir, the files a driver reads next to NVML:
// /proc/devices with the nvidia-uvm and nvidia-caps majors, the MIG
// capability access files, each GPU's sysfs numa_node, and empty
// placeholders for the /dev nodes (regular files: creating real character
// devices needs root, so drivers fall back to /proc/devices for majors).
// It may run again over a root it wrote, as a restarted agent does.
func (m *Machine) WriteRoot(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.root = dir
	files := map[string]string{
		"proc/devices": fmt.Sprintf("Character devices:\n  1 mem\n  5 /dev/tty\n195 nvidia-frontend\n%d nvidia-caps\n%d nvidia-uvm\n\nBlock devices:\n  8 sd\n",
			CapsMajor, UVMMajor),
	}
	nodes := []string{"dev/nvidiactl", "dev/nvidia-uvm", "dev/nvidia-uvm-tools"}
	for _, g := range m.gpus {
		nodes = append(nodes, fmt.Sprintf("dev/nvidia%d", g.minor))
		files[filepath.Join("sys/bus/pci/devices", sysfsBusID(g.domain, g.bus), "numa_node")] = fmt.Sprintf("%d\n", g.numa)
		for _, s := range g.mig {
			base := fmt.Sprintf("proc/driver/nvidia/capabilities/gpu%d/mig/gi%d", g.minor, s.giID)
			gi, ci := CapMinor(g.minor, s.giID, -1), CapMinor(g.minor, s.giID, s.ciID)
			files[base+"/access"] = capFile(gi)
			files[fmt.Sprintf("%s/ci%d/access", base, s.ciID)] = capFile(ci)
			nodes = append(nodes, fmt.Sprintf("dev/nvidia-caps/nvidia-cap%d", gi), fmt.Sprintf("dev/nvidia-caps/nvidia-cap%d", ci))
		}
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("nvmlsim: write root: %w", err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("nvmlsim: write root: %w", err)
		}
	}
	for _, rel := range nodes {
		if err := placeholder(filepath.Join(dir, rel)); err != nil {
			return fmt.Errorf("nvmlsim: write root: %w", err)
		}
	}
	return nil
}

// placeholder makes an empty file at p unless something is there already:
// a restart finds the character device the lab made of it on the first
// start, and writing into that one fails (ENXIO, no driver behind it).
func placeholder(p string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

func capFile(minor int) string {
	return strings.Join([]string{
		fmt.Sprintf("DeviceFileMinor: %d", minor), "DeviceFileMode: 292", "DeviceFileModify: 1", "",
	}, "\n")
}
