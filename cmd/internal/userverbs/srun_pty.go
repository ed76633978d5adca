package userverbs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// sendInput streams srun's stdin to a --pty step until it ends, then
// says end of input.
func sendInput(ctx context.Context, s *session, job uint64, step uint32, in io.Reader, stderr io.Writer) {
	stream, err := s.c.StepInput(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "srun: error: stdin not forwarded: %v\n", err)
		return
	}
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			if stream.Send(&pb.StepInputChunk{JobId: job, StepId: step, Data: append([]byte(nil), buf[:n]...)}) != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				stream.Send(&pb.StepInputChunk{JobId: job, StepId: step, Eof: true})
			}
			stream.CloseAndRecv()
			return
		}
	}
}

// rawTerminal puts a terminal stdin into raw mode, so keys (Ctrl-C
// included) go to the step's terminal rather than to srun; it returns
// the restore. Other inputs are left alone.
func rawTerminal(in io.Reader) func() {
	f, ok := in.(*os.File)
	if !ok {
		return func() {}
	}
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}
	}
	raw := *old
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) }
}
