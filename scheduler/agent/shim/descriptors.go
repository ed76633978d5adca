package shim

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A job must start holding exactly the files its start names (0, 1 and
// 2, and for a stage-2 shell its release pipe). Go opens almost every
// descriptor close-on-exec, but a process also holds what it inherited
// without the flag (the descriptors of the shell that started the agent,
// say), and code outside Go's own (the race detector's runtime, a C
// library) may open some without it; a fork hands every one of those to
// the child, whichever path starts it. Marking all descriptors from 3 up
// close-on-exec just before each start closes them in the child at its
// exec. The flag changes nothing for the process itself, so it is safe
// for descriptors that belong to someone else in it.

// SealDescriptors marks every descriptor from 3 up close-on-exec, so a
// child started next gets only what its start passes explicitly. It holds
// syscall.ForkLock meanwhile: a descriptor Go makes in two steps (made,
// then marked) is never caught between them. Call it right before
// starting a child.
func SealDescriptors() error {
	// Go's time package reads /etc/localtime without close-on-exec (and
	// outside ForkLock) on the first use of local time, such as the first
	// status file's timestamps: done here first, before any start, it can
	// never be open while a child is forked. Later calls cost nothing.
	time.Now().Zone()
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	return closeOnExecFrom(3)
}

// closeOnExecFrom marks every descriptor from lowest up close-on-exec:
// in one call where the kernel has close_range's flag (Linux 5.11), one
// by one from /proc/self/fd before that.
func closeOnExecFrom(lowest int) error {
	err := unix.CloseRange(uint(lowest), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("close_range from %d: %w", lowest, err)
	}
	d, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("list descriptors: %w", err)
	}
	dir := os.NewFile(uintptr(d), "/proc/self/fd")
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("list descriptors: %w", err)
	}
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd < lowest {
			continue
		}
		// EBADF: the listing's own handle, or one closed meanwhile.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("descriptor %d: close-on-exec: %w", fd, err)
		}
	}
	return nil
}
