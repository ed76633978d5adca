package gaudisim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// writer creates files under root, keeping the first error so a generator
// reads as a list of files.
type writer struct {
	root string
	err  error
}

func (w *writer) dir(rel string) {
	if w.err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Join(w.root, rel), 0o755); err != nil {
		w.err = fmt.Errorf("gaudisim: create %s: %w", rel, err)
	}
}

func (w *writer) file(rel, content string) {
	w.dir(filepath.Dir(rel))
	if w.err != nil {
		return
	}
	w.err = writeAtomic(filepath.Join(w.root, rel), content)
}

func (w *writer) link(rel, target string) {
	w.dir(filepath.Dir(rel))
	if w.err != nil {
		return
	}
	path := filepath.Join(w.root, rel)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		w.err = fmt.Errorf("gaudisim: replace %s: %w", rel, err)
		return
	}
	if err := os.Symlink(target, path); err != nil {
		w.err = fmt.Errorf("gaudisim: link %s -> %s: %w", rel, target, err)
	}
}

// devnode creates a character device major:minor (mknod, needs root) or an
// empty placeholder file.
func (w *writer) devnode(rel string, major, minor uint32, real bool) {
	w.dir(filepath.Dir(rel))
	if w.err != nil {
		return
	}
	path := filepath.Join(w.root, rel)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		w.err = fmt.Errorf("gaudisim: replace %s: %w", rel, err)
		return
	}
	if !real {
		w.err = writeAtomic(path, "")
		return
	}
	if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(major, minor))); err != nil {
		w.err = fmt.Errorf("gaudisim: mknod %s %d:%d: %w", rel, major, minor, err)
	}
}

// writeAtomic replaces a file by rename, so a reader never sees half a value.
func writeAtomic(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return fmt.Errorf("gaudisim: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("gaudisim: write %s: %w", path, err)
	}
	return nil
}

// Open describes an existing tree under root (one Generate wrote, perhaps
// in another process) so its hooks can fault it: the inject command of the
// adapter uses it.
func Open(root string) (*Machine, error) {
	entries, err := os.ReadDir(filepath.Join(root, "sys/class/accel"))
	if err != nil {
		return nil, fmt.Errorf("gaudisim: no simulated cards under %s: %w", root, err)
	}
	m := &Machine{Root: root}
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "accel")
		i, err := strconv.Atoi(n)
		if !ok || err != nil {
			continue // a control node
		}
		dir, err := filepath.EvalSymlinks(filepath.Join(root, "sys/class/accel", e.Name(), "device"))
		if err != nil {
			return nil, fmt.Errorf("gaudisim: accel%d: %w", i, err)
		}
		hw, _ := filepath.Glob(filepath.Join(dir, "hwmon", "hwmon*"))
		c := Card{Accel: i, BDF: filepath.Base(dir), DeviceDir: dir}
		if b, err := os.ReadFile(filepath.Join(dir, "device_type")); err == nil {
			m.Config.Family = strings.TrimSpace(string(b))
		}
		if len(hw) > 0 {
			c.HwmonDir = hw[0]
		}
		m.Cards = append(m.Cards, c)
	}
	slices.SortFunc(m.Cards, func(a, b Card) int { return a.Accel - b.Accel })
	return m, nil
}
