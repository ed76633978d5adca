package amdsim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// writer creates files under root and keeps the first error, so the
// generators read as lists of files.
type writer struct {
	root string
	err  error
	dirs map[string]bool // directories already created, to halve the syscalls
}

func (w *writer) mkdirFor(p string) error {
	dir := filepath.Dir(p)
	if w.dirs[dir] {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if w.dirs == nil {
		w.dirs = map[string]bool{}
	}
	w.dirs[dir] = true
	return nil
}

func (w *writer) fail(err error) {
	if w.err == nil && err != nil {
		w.err = fmt.Errorf("amdsim: %w", err)
	}
}

func (w *writer) path(rel string) string { return filepath.Join(w.root, rel) }

func (w *writer) file(rel, content string) {
	if w.err != nil {
		return
	}
	p := w.path(rel)
	if err := w.mkdirFor(p); err != nil {
		w.fail(err)
		return
	}
	w.fail(os.WriteFile(p, []byte(content), 0o644))
}

// files writes several files of one directory.
func (w *writer) files(dir string, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		w.file(dir+"/"+kv[i], kv[i+1])
	}
}

// link makes rel a relative symlink to target, as sysfs does.
func (w *writer) link(target, rel string) {
	if w.err != nil {
		return
	}
	p := w.path(rel)
	if err := w.mkdirFor(p); err != nil {
		w.fail(err)
		return
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		w.fail(err)
		return
	}
	w.fail(os.Symlink(target, p))
}

// devnode creates a character device (real=true, needs root) or a regular
// placeholder file naming the numbers it stands for.
func (w *writer) devnode(rel string, major, minor uint32, real bool) {
	if w.err != nil {
		return
	}
	if !real {
		// Kept when something is there: a restart in place finds the
		// character device the lab made of it, and writing into that one
		// fails (ENXIO, no driver behind it).
		if _, err := os.Lstat(w.path(rel)); err == nil {
			return
		}
		w.file(rel, fmt.Sprintf("placeholder for character device %d:%d\n", major, minor))
		return
	}
	p := w.path(rel)
	if err := w.mkdirFor(p); err != nil {
		w.fail(err)
		return
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		w.fail(err)
		return
	}
	if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(major, minor))); err != nil {
		w.fail(fmt.Errorf("mknod %s %d:%d: %w", p, major, minor, err))
	}
}

// writeAtomic replaces a file by rename so a concurrent reader (the driver
// under test) never sees half a value. The temporary name keeps the
// original suffix off, so globbing drivers never pick it up.
func writeAtomic(path, content string) error {
	tmp := path + ".amdsim-tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return fmt.Errorf("amdsim: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("amdsim: %w", err)
	}
	return nil
}
