package nvidia

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/gres"
)

// Fixed minors of the control and UVM nodes.
const (
	ctlMinor      = 255
	uvmMinor      = 0
	uvmToolsMinor = 1
)

// devFile names a node under <root>/dev.
func (d *Driver) devFile(name string, major, minor uint32) gres.DeviceFile {
	return gres.DeviceFile{Path: filepath.Join(d.opts.root, "dev", name), Major: major, Minor: minor}
}

// sharedFiles are the nodes every CUDA job needs: nvidiactl (195:255) and
// the UVM pair, whose major is dynamic. The UVM numbers come from the
// device node itself when it is a real character device, else from the
// nvidia-uvm line of /proc/devices; without either they are left out.
func (d *Driver) sharedFiles() []gres.DeviceFile {
	files := []gres.DeviceFile{d.devFile("nvidiactl", nvidiaMajor, ctlMinor)}
	procMajor, procErr := d.procMajor("nvidia-uvm")
	for _, f := range []struct {
		name  string
		minor uint32
	}{{"nvidia-uvm", uvmMinor}, {"nvidia-uvm-tools", uvmToolsMinor}} {
		if major, minor, ok := charDevice(filepath.Join(d.opts.root, "dev", f.name)); ok {
			files = append(files, d.devFile(f.name, major, minor))
			continue
		}
		if procErr != nil {
			d.log.Warn("leaving out a UVM device node: its major is unknown", "node", f.name, "err", procErr)
			continue
		}
		files = append(files, d.devFile(f.name, procMajor, f.minor))
	}
	return files
}

// charDevice stats a path and returns its numbers if it is a character device.
func charDevice(path string) (major, minor uint32, ok bool) {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return 0, 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)), true
}

// procMajor reads the major of a character driver from <root>/proc/devices.
func (d *Driver) procMajor(name string) (uint32, error) {
	path := filepath.Join(d.opts.root, "proc/devices")
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("nvidia: read %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inChar := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "Character devices:":
			inChar = true
			continue
		case strings.HasSuffix(line, "devices:"):
			inChar = false
			continue
		}
		num, dev, ok := strings.Cut(line, " ")
		if !inChar || !ok || strings.TrimSpace(dev) != name {
			continue
		}
		major, err := strconv.ParseUint(num, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("nvidia: %s: major %q of %s is not a number", path, num, name)
		}
		return uint32(major), nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("nvidia: read %s: %w", path, err)
	}
	return 0, fmt.Errorf("nvidia: %s lists no %s driver", path, name)
}

// migCapFile reads the nvidia-caps minor from a MIG capability access
// file ("DeviceFileMinor: 12") under <root>/proc/driver/nvidia/capabilities.
func (d *Driver) migCapFile(rel string) (uint32, error) {
	path := filepath.Join(d.opts.root, "proc/driver/nvidia/capabilities", rel)
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("nvidia: read %s: %w", path, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "DeviceFileMinor:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
			if err != nil {
				return 0, fmt.Errorf("nvidia: %s: minor %q is not a number", path, v)
			}
			return uint32(m), nil
		}
	}
	return 0, fmt.Errorf("nvidia: %s has no DeviceFileMinor line", path)
}
