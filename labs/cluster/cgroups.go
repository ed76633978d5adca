package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CgroupRoot is the cgroup parent of one lab instance's job groups:
// /parity-lab/<name>-<id>, where id derives from the lab's state directory.
// Two runs of the same lab from different directories therefore never
// share groups, and `parity lab down --dir DIR` can find exactly its own
// from the directory alone.
func CgroupRoot(name, dir string) (string, error) {
	id, err := instanceID(dir)
	if err != nil {
		return "", err
	}
	return "/parity-lab/" + cgroupSafe(name) + "-" + id, nil
}

// instanceID names the lab instance kept in dir: a short hash of its
// absolute path, the same for every process of the instance.
func instanceID(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("cluster: lab directory %q: %w", dir, err)
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return hex.EncodeToString(sum[:4]), nil
}

// cgroupSafe keeps a lab name usable as one path element.
func cgroupSafe(name string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
	if s == "" || strings.Trim(s, ".") == "" {
		return "lab"
	}
	return s
}

// cgroupMounts are where this host may keep a group: every v1 controller
// hierarchy and the v2 tree (unified or hybrid).
func cgroupMounts() []string {
	var out []string
	entries, _ := os.ReadDir("/sys/fs/cgroup")
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join("/sys/fs/cgroup", e.Name()))
		}
	}
	return append(out, "/sys/fs/cgroup")
}

// RemoveCgroups kills whatever still runs in the groups under root (a lab
// instance's CgroupRoot), in every mount, and removes the groups children
// first. Groups of other lab instances are not touched.
func RemoveCgroups(root string) error {
	inst, ok := strings.CutPrefix(root, "/parity-lab/")
	if !ok || inst == "" || inst == "." || inst == ".." || strings.Contains(inst, "/") {
		return fmt.Errorf("cluster: cgroup root %q is no lab instance's (want /parity-lab/NAME-ID)", root)
	}
	var errs []error
	for _, mount := range cgroupMounts() {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(mount, root), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Sort(sort.Reverse(sort.StringSlice(dirs))) // children before parents
		for _, d := range dirs {
			killGroup(d)
			if err := removeGroup(d); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// killGroup sends SIGKILL to every process left in a group.
func killGroup(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// removeGroup removes an emptied group, retrying briefly while killed
// processes are reaped.
func removeGroup(dir string) error {
	var err error
	for range 50 {
		if err = os.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond) // the kernel reaps killed members asynchronously
	}
	return fmt.Errorf("cluster: remove cgroup %s: %w", dir, err)
}
