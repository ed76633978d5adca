package cluster

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

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

// removeCgroupTree removes the lab's group hierarchy bottom-up in every
// mount. Groups still holding processes cannot be removed and are reported.
func removeCgroupTree(root string) error {
	var errs []error
	for _, mount := range cgroupMounts() {
		top := filepath.Join(mount, root)
		var dirs []string
		_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Sort(sort.Reverse(sort.StringSlice(dirs))) // children before parents
		for _, d := range dirs {
			if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
