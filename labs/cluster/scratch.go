package cluster

import (
	"os"

	"golang.org/x/sys/unix"
)

// ScratchDir is where a throwaway lab instance (one removed when its run
// ends) had best live: the tmpfs every Linux system mounts for POSIX
// shared memory, when it is writable and allows executables and device
// files (a lab installs a probe its jobs run, and makes device nodes
// under its nodes' roots); else the system's temporary directory. A lab
// writes tens of thousands of small files (each node's simulated /sys,
// /proc and /dev, and the conformance suite's rebuilt copies of nodes);
// on a disk file system creating and then removing them costs the
// journal seconds, most of a short run's teardown.
func ScratchDir() string {
	return scratchDir(shmDir, os.TempDir())
}

func scratchDir(tmpfs, fallback string) string {
	if usableTmpfs(tmpfs, unix.ST_NOEXEC|unix.ST_NODEV) {
		return tmpfs
	}
	return fallback
}

// usableTmpfs reports whether dir is a writable tmpfs mounted without any
// of the mount flags in refuse (unix.ST_*).
func usableTmpfs(dir string, refuse int64) bool {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil || fs.Type != unix.TMPFS_MAGIC {
		return false
	}
	if fs.Flags&refuse != 0 {
		return false
	}
	return unix.Access(dir, unix.W_OK) == nil
}
