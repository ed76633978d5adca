package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// StopStale stops what a process lab in dir left running when its parent
// died: every daemon named by a pid file under DIR/run whose command line
// still names dir (a reused pid is left alone). It returns the daemons it
// signalled.
func StopStale(ctx context.Context, dir string, out io.Writer) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	files, _ := filepath.Glob(filepath.Join(abs, RunDir, "*.pid"))
	var errs []error
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.Contains(string(cmdline), abs) {
			continue // gone, or the pid now belongs to someone else
		}
		fmt.Fprintf(out, "Stopping %s (pid %d) …\n", strings.TrimSuffix(filepath.Base(f), ".pid"), pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		if err := waitGone(ctx, pid); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// waitGone polls until pid no longer runs (it is not its parent, so it
// cannot reap it).
func waitGone(ctx context.Context, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || zombie(b) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: pid %d still runs after SIGKILL: %w", pid, ctx.Err())
		case <-tick.C:
		}
	}
}

// zombie reports whether a /proc/PID/stat line is an exited process.
func zombie(stat []byte) bool {
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}
