package launch

import (
	"os"

	"golang.org/x/sys/unix"
)

// mkfifo makes a named pipe any user can open.
func mkfifo(path string) error {
	if err := unix.Mkfifo(path, 0o666); err != nil {
		return err
	}
	return os.Chmod(path, 0o666)
}
