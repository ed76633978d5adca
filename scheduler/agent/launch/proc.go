package launch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// procStart returns a process's start time in clock ticks since boot
// (field 22 of /proc/<pid>/stat), which with the pid identifies it for
// good: a recycled pid has a later start time.
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name may contain spaces and parentheses; fields resume
	// after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("launch: malformed /proc/%d/stat", pid)
	}
	f := bytes.Fields(b[i+1:])
	const startField = 22 - 3 // fields after ')' start at field 3
	if len(f) <= startField {
		return 0, fmt.Errorf("launch: short /proc/%d/stat", pid)
	}
	return strconv.ParseUint(string(f[startField]), 10, 64)
}

// errGone says the process is not (or no longer) the one recorded.
var errGone = errors.New("launch: process is gone")

// openProcess returns a pidfd for pid if it is still the process that
// started at start ticks. The pidfd is opened before the start time is
// checked, so it cannot end up naming a recycled pid.
func openProcess(pid int, start uint64) (int, error) {
	if pid <= 0 {
		return -1, errGone
	}
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return -1, errGone
		}
		return -1, fmt.Errorf("launch: pidfd_open %d: %w", pid, err)
	}
	got, err := procStart(pid)
	if err != nil || got != start || exited(fd) {
		unix.Close(fd)
		return -1, errGone
	}
	return fd, nil
}

// exited reports whether the process behind pidfd has already exited. A
// shim that ended but is not yet reaped (a zombie) keeps its pid and start
// time, yet must count as gone, or its job would be re-attached as running.
func exited(pidfd int) bool {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1 && fds[0].Revents&unix.POLLIN != 0
}

// waitExit blocks until the process behind pidfd exits (the pidfd becomes
// readable, which works for non-children too) or stop becomes readable.
// It reports whether the process exited.
func waitExit(pidfd, stop int) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}, {Fd: int32(stop), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("launch: poll pidfd: %w", err)
		}
		if fds[0].Revents != 0 {
			return true, nil
		}
		if fds[1].Revents != 0 {
			return false, nil
		}
	}
}
