package launch

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openPTY allocates a pseudo-terminal: the master the agent reads and
// writes, the slave that becomes the task's controlling terminal.
func openPTY() (master, slave *os.File, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("pty number: %w", err)
	}
	name := "/dev/pts/" + strconv.Itoa(n)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("open %s: %w", name, err)
	}
	return master, os.NewFile(uintptr(sfd), name), nil
}

// chownPTY gives the task's user its terminal, as login does.
func chownPTY(slave *os.File, uid, gid uint32) error {
	if err := slave.Chown(int(uid), int(gid)); err != nil {
		return fmt.Errorf("chown %s: %w", slave.Name(), err)
	}
	return nil
}

// forwardRaw hands everything read from a pty master to out as it comes;
// the master reports EIO once the last holder of the slave is gone.
func forwardRaw(r io.Reader, out func([]byte)) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			out(append([]byte(nil), buf[:n]...))
		}
		if err != nil {
			return // EOF, or EIO once the terminal has no holder left
		}
	}
}

// Stdin is the terminal input of a --pty step's first task (nil for
// other steps). Writing a Ctrl-D (0x04) at a line start ends its input.
func (st *Step) Stdin() io.Writer {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.pty == nil {
		return nil
	}
	return st.pty
}
