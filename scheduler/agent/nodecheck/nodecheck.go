package nodecheck

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/healthcheck"
)

// Check is one node-level check. Run must honour ctx and return promptly
// when it ends; implementations are safe for concurrent use.
type Check interface {
	Name() string
	Run(ctx context.Context) (passed bool, message string)
}

// RunAll runs every check in order and stamps each result with now().
func RunAll(ctx context.Context, checks []Check, now func() time.Time) []healthcheck.NodeCheck {
	out := make([]healthcheck.NodeCheck, 0, len(checks))
	for _, c := range checks {
		ok, msg := c.Run(ctx)
		out = append(out, healthcheck.NodeCheck{Name: c.Name(), Time: now(), Passed: ok, Message: msg})
	}
	return out
}

// DiskFree fails when the filesystem holding Path has less than MinFreeBytes
// available to unprivileged users, or less than MinFreePct percent of it.
type DiskFree struct {
	Path         string
	MinFreeBytes uint64
	MinFreePct   float64
}

// Name is "disk:" and the path.
func (d DiskFree) Name() string { return "disk:" + d.Path }

// Run reads the filesystem's free space.
func (d DiskFree) Run(context.Context) (bool, string) {
	var st unix.Statfs_t
	if err := unix.Statfs(d.Path, &st); err != nil {
		return false, fmt.Sprintf("statfs %s: %v", d.Path, err)
	}
	free := st.Bavail * uint64(st.Bsize)
	total := st.Blocks * uint64(st.Bsize)
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(free) / float64(total)
	}
	msg := fmt.Sprintf("%s: %s free (%.1f%%)", d.Path, bytesText(free), pct)
	switch {
	case free < d.MinFreeBytes:
		return false, fmt.Sprintf("%s, below %s", msg, bytesText(d.MinFreeBytes))
	case pct < d.MinFreePct:
		return false, fmt.Sprintf("%s, below %.1f%%", msg, d.MinFreePct)
	}
	return true, msg
}

// Memory fails when MemAvailable in MemInfo (default /proc/meminfo) is
// below MinAvailableBytes.
type Memory struct {
	MemInfo           string
	MinAvailableBytes uint64
}

// Name is "memory".
func (Memory) Name() string { return "memory" }

// Run reads MemAvailable.
func (m Memory) Run(context.Context) (bool, string) {
	path := m.MemInfo
	if path == "" {
		path = "/proc/meminfo"
	}
	avail, err := memAvailable(path)
	if err != nil {
		return false, err.Error()
	}
	msg := bytesText(avail) + " available"
	if avail < m.MinAvailableBytes {
		return false, fmt.Sprintf("%s, below %s", msg, bytesText(m.MinAvailableBytes))
	}
	return true, msg
}

func memAvailable(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("nodecheck: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			break
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("nodecheck: %s: MemAvailable %q: %w", path, fields[0], err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("nodecheck: %s: %w", path, err)
	}
	return 0, fmt.Errorf("nodecheck: %s has no MemAvailable line", path)
}

// Script runs a site check program: exit status 0 passes; anything else,
// or running past Timeout (default 30 s, NHC's), fails with the first
// line the program printed (NHC prints its reason there).
type Script struct {
	Path    string
	Args    []string
	Timeout time.Duration
}

// Name is "script:" and the program's path.
func (s Script) Name() string { return "script:" + s.Path }

// Run runs the program, killing it at the timeout.
func (s Script) Run(ctx context.Context) (bool, string) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Path, s.Args...)
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	// Kill the whole group: a check's children must not outlive it.
	cmd.Cancel = func() error { return unix.Kill(-cmd.Process.Pid, unix.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	first, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return false, fmt.Sprintf("%s timed out after %v", s.Path, timeout)
	case err != nil:
		if first == "" {
			first = err.Error()
		}
		return false, first
	}
	return true, first
}

func bytesText(b uint64) string {
	const gib, mib = 1 << 30, 1 << 20
	if b >= gib {
		return fmt.Sprintf("%.1f GiB", float64(b)/gib)
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/mib)
}
