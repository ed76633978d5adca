package cluster

import (
	"testing"

	"golang.org/x/sys/unix"
)

// A lab's scratch directory is a usable tmpfs when one is given, and the
// fallback for a disk directory or a path that does not exist.
func TestScratchDirPrefersAUsableTmpfs(t *testing.T) {
	disk := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(disk, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC {
		t.Skipf("the test's temporary directory %s is itself on tmpfs", disk)
	}
	for _, tc := range []struct {
		name, tmpfs, want string
	}{
		{name: "a disk directory", tmpfs: disk, want: "fallback"},
		{name: "a missing path", tmpfs: disk + "/missing", want: "fallback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := scratchDir(tc.tmpfs, "fallback"); got != tc.want {
				t.Errorf("scratchDir(%s) = %q, want %q", tc.tmpfs, got, tc.want)
			}
		})
	}
	if !usableTmpfs(shmDir, unix.ST_NOEXEC|unix.ST_NODEV) {
		t.Skipf("%s is no writable tmpfs allowing executables and devices here", shmDir)
	}
	if got := ScratchDir(); got != shmDir {
		t.Errorf("ScratchDir() = %q on a host whose %s is a usable tmpfs", got, shmDir)
	}
}
