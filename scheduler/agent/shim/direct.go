package shim

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The direct path starts the job without the stage-2 shell, one exec less
// per job (on a VM where an exec costs milliseconds of CPU that is a fifth
// of a short job's whole cost). What the shell did is done here instead:
//   - the output files are opened by a thread of the shim that carries the
//     job's file-system identity (fsuid, fsgid, groups), so the kernel
//     checks them as the user's; only regular files and the pseudo-devices
//     every job may use are opened this way, since the shim is outside the
//     job's device allow-list;
//   - the working directory is checked the same way and entered by the
//     child after it has switched to the user;
//   - the job is held before its first instruction by a ptrace stop at its
//     exec, put into its cgroup and then released (PTRACE_O_EXITKILL makes
//     a supervisor that dies meanwhile take the job with it).
// Anything unusual (a directory the user cannot enter, an output path that
// is a symlink or a device, a command found through PATH, ptrace refused,
// a failed exec) falls back to the stage-2 shell, which keeps the exact
// messages and exit codes it always had.

// startHeld forks and execs the job as its user, in its own process group,
// stopped by ptrace right after the exec. The calling thread is the
// tracer: it must be the launcher's.
func startHeld(cfg Config, files stdio) (int, error) {
	attr := &syscall.ProcAttr{Dir: cfg.Dir, Env: cfg.Env,
		Files: []uintptr{uintptr(files.in), uintptr(files.out), uintptr(files.err)},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Ptrace: true}}
	if c := cfg.Credential; c != nil {
		attr.Sys.Credential = &syscall.Credential{Uid: c.UID, Gid: c.GID, Groups: c.Groups}
	}
	pid, err := syscall.ForkExec(cfg.Argv[0], cfg.Argv, attr)
	if err != nil {
		return 0, err
	}
	if err := awaitExecStop(pid); err != nil {
		reapKilled(pid)
		return 0, err
	}
	return pid, nil
}

// stdio are the job's standard files as plain descriptors (an os.File
// costs each a poller registration and a finalizer), opened as the job's
// user; err may be out itself. A descriptor equal to shared is the
// supervisor's own /dev/null and stays open.
type stdio struct{ in, out, err, shared int }

func (s stdio) close() {
	for i, fd := range []int{s.in, s.out, s.err} {
		if fd >= 0 && fd != s.shared && (i < 2 || fd != s.out) {
			unix.Close(fd)
		}
	}
}

// awaitExecStop waits for the SIGTRAP stop that follows the traced exec
// and makes the job die with its tracer from then on.
func awaitExecStop(pid int) error {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, syscall.WALL, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	if !ws.Stopped() || ws.StopSignal() != syscall.SIGTRAP {
		return fmt.Errorf("job %d: not stopped at its exec (wait status %#x)", pid, ws)
	}
	return syscall.PtraceSetOptions(pid, unix.PTRACE_O_EXITKILL)
}

// openAsJob opens the job's standard files with the job's identity. It
// fails (and the caller falls back to the shell) when the working
// directory cannot be entered by the user or a path is not a regular file
// or an always-allowed pseudo-device. /dev/null, the usual stdin and a
// common output, is the supervisor's own descriptor devNull (read-write,
// and a device every job may use), so it costs no open.
func openAsJob(cfg Config, devNull int) (stdio, error) {
	type result struct {
		s   stdio
		err error
	}
	ch := make(chan result, 1)
	open := func() {
		s := stdio{in: -1, out: -1, err: -1, shared: devNull}
		err := asJob(cfg.Credential, func() error {
			if err := searchable(cfg.Dir); err != nil {
				return err
			}
			var err error
			if s.in, err = openStdio(cfg.Stdin, os.O_RDONLY, cfg.Umask, devNull); err != nil {
				return err
			}
			mode := os.O_WRONLY | os.O_TRUNC
			if cfg.Append {
				mode = os.O_WRONLY | os.O_APPEND
			}
			if s.out, err = openStdio(cfg.Stdout, mode, cfg.Umask, devNull); err != nil {
				return err
			}
			if cfg.Stderr == "" || cfg.Stderr == cfg.Stdout {
				s.err = s.out
				return nil
			}
			s.err, err = openStdio(cfg.Stderr, mode, cfg.Umask, devNull)
			return err
		})
		if err != nil {
			s.close()
		}
		ch <- result{s, err}
	}
	if cfg.Credential == nil {
		open()
	} else {
		// The identity change is per thread and the thread is thrown away:
		// the goroutine exits still locked to it.
		go func() {
			runtime.LockOSThread()
			open()
		}()
	}
	r := <-ch
	return r.s, r.err
}

// openStdio opens one standard file: "" (stdin only) and /dev/null are
// devNull when the supervisor has one, anything else goes through
// openChecked.
func openStdio(path string, flags, umask, devNull int) (int, error) {
	if (path == "" || path == os.DevNull) && devNull >= 0 {
		return devNull, nil
	}
	if path == "" {
		path = os.DevNull
	}
	return openChecked(path, flags, umask)
}

// asJob runs fn with the calling thread's file-system identity switched to
// c (nil: unchanged). The caller's thread must be locked and discarded.
func asJob(c *Credential, fn func() error) error {
	if c == nil {
		return fn()
	}
	var groups unsafe.Pointer
	if len(c.Groups) > 0 {
		groups = unsafe.Pointer(&c.Groups[0])
	}
	// Raw syscalls: the libraries' wrappers change every thread.
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, uintptr(len(c.Groups)), uintptr(groups), 0); e != 0 {
		return fmt.Errorf("setgroups: %w", e)
	}
	syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(c.GID), 0, 0)
	syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(c.UID), 0, 0)
	// setfs[ug]id report no errors; asking again returns the value in force.
	gid, _, _ := syscall.RawSyscall(syscall.SYS_SETFSGID, ^uintptr(0), 0, 0)
	uid, _, _ := syscall.RawSyscall(syscall.SYS_SETFSUID, ^uintptr(0), 0, 0)
	if uint32(uid) != c.UID || uint32(gid) != c.GID {
		return fmt.Errorf("file-system identity is %d:%d, want %d:%d", uid, gid, c.UID, c.GID)
	}
	return fn()
}

// searchable reports whether dir can be entered: resolving "dir/." needs
// search permission on dir itself, as chdir does.
func searchable(dir string) error {
	fd, err := unix.Open(dir+"/.", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// openChecked opens path with flags (creating a missing file with 0666
// less the job's umask; the supervisor's own is 0), but only when it is a
// regular file or an always-allowed pseudo-device: the path is looked at
// first without opening it (O_PATH, not through a symlink) and then
// reopened through that very handle, so it cannot be swapped for a device
// in between. The descriptor is close-on-exec: the fork hands it on.
func openChecked(path string, flags, umask int) (int, error) {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) && flags != os.O_RDONLY {
		// A new file is a regular one; O_EXCL refuses anything that
		// appeared meanwhile.
		fd, err := unix.Open(path, (flags&^os.O_TRUNC)|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(0o666&^(umask&0o777)))
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(pfd)
	var fi unix.Stat_t
	if err := unix.Fstat(pfd, &fi); err != nil {
		return -1, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	switch fi.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFCHR:
		if !pseudoDevice(unix.Major(fi.Rdev), unix.Minor(fi.Rdev)) {
			return -1, fmt.Errorf("%s is a device outside the basic set", path)
		}
	default:
		return -1, fmt.Errorf("%s is neither a regular file nor a basic device", path)
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// pseudoDevice reports the devices every job's allow-list holds (null,
// zero, full, random, urandom, tty, ptmx, pty slaves: the agent's cgroup
// package's basicDevices, which this package may not import), so opening
// one from outside the job's group widens nothing.
func pseudoDevice(major, minor uint32) bool {
	switch major {
	case 1:
		return minor == 3 || minor == 5 || minor == 7 || minor == 8 || minor == 9
	case 5:
		return minor == 0 || minor == 2
	case 136:
		return true
	}
	return false
}
