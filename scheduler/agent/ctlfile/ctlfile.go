// Package ctlfile reads and writes kernel control files (cgroup, proc)
// with plain system calls. An os.File registers each such file with the
// runtime's poller (one epoll_ctl more a file) and carries a finalizer;
// a job's start and end touch some thirty of them. It imports only the
// standard library and x/sys, so the job supervisor may use it.
package ctlfile

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Read reads a control file whole.
func Read(path string) ([]byte, error) {
	fd, err := openRetry(path, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return nil, &pathError{"open", path, err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return nil, &pathError{"read", path, err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// ReadValue reads a file that is handed over in one read when it fits the
// buffer: a regular file no one is writing (a spool record) or a control
// file produced whole by one kernel show function (a counter, a limit,
// memory.stat, oom_control). A read that leaves room is then its end, and
// the second read that Read makes to see the end is saved. Lists that
// grow with a group's members (cgroup.procs, tasks) are not such files:
// use Read.
func ReadValue(path string) ([]byte, error) {
	fd, err := openRetry(path, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return nil, &pathError{"open", path, err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &pathError{"read", path, err}
		}
		if n < len(buf) {
			return buf[:n], nil
		}
		break
	}
	// It filled the buffer: read it again whole.
	return Read(path)
}

// Write writes value to a control file in one write.
func Write(path, value string) error { return WriteEach(path, value) }

// WriteEach writes each value to a control file in a write of its own,
// opening it once: files such as devices.allow take one rule a write,
// and a job's dozen rules each paid an open and a path walk before.
// It stops at the first value the kernel refuses.
func WriteEach(path string, values ...string) error {
	fd, err := openRetry(path, unix.O_WRONLY|unix.O_TRUNC|unix.O_CLOEXEC)
	if err != nil {
		if len(values) > 0 {
			return fmt.Errorf("write %q to %s: %w", values[0], path, err)
		}
		return fmt.Errorf("open %s: %w", path, err)
	}
	for _, v := range values {
		for {
			_, err = unix.Write(fd, []byte(v))
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		if err != nil {
			unix.Close(fd)
			return fmt.Errorf("write %q to %s: %w", v, path, err)
		}
	}
	if err := unix.Close(fd); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}

func openRetry(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, flags, 0)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// pathError is os.PathError's shape, so errors.Is(err, fs.ErrNotExist)
// keeps working on what these return.
type pathError struct {
	op, path string
	err      error
}

func (e *pathError) Error() string { return e.op + " " + e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }
