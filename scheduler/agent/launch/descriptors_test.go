package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/parityhpc/parity/scheduler/accounting"
)

// listFDs prints the descriptors the shell running it was started with
// (the last builtin keeps it from exec'ing ls in its place).
const listFDs = "ls -l /proc/$$/fd; :"

// heldFDs reads an `ls -l /proc/PID/fd` listing: the descriptor numbers,
// sorted.
func heldFDs(lines []string) []string {
	var fds []string
	for _, line := range lines {
		if before, _, ok := strings.Cut(line, " -> "); ok {
			f := strings.Fields(before)
			fds = append(fds, f[len(f)-1])
		}
	}
	slices.Sort(fds)
	return fds
}

// TestJobsAndStepTasksStartWithOnlyTheirStandardDescriptors: the agent
// holds descriptors without close-on-exec (as it inherits them from the
// shell that started it: a file, a pipe); batch jobs started together
// and a step's tasks, which the agent starts itself, hold exactly 0, 1
// and 2.
func TestJobsAndStepTasksStartWithOnlyTheirStandardDescriptors(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	want := []string{"0", "1", "2"}

	// Fresh strays before each part: a start marks those it finds.
	strayDescriptors(t)
	sr := NewStepRunner(e.rt)
	var col stepCollector
	st, err := sr.Launch(context.Background(), e.stepSpec(30, 0, 3, "/bin/sh", "-c", listFDs), col.io())
	if err != nil {
		t.Fatal(err)
	}
	waitStep(t, st)
	for _, rank := range []uint32{10, 11, 12} {
		var lines []string
		for _, l := range col.lines[rank] {
			if s, ok := strings.CutPrefix(l, "1:"); ok {
				lines = append(lines, s)
			}
		}
		if got := heldFDs(lines); !slices.Equal(got, want) {
			t.Errorf("step task %d held descriptors %v, want %v:\n%s", rank, got, want, strings.Join(col.lines[rank], "\n"))
		}
	}

	strayDescriptors(t)
	const jobs = 4
	for i := range uint64(jobs) {
		e.launch(e.spec(40+i, "exec /bin/sh -c '"+listFDs+"'"))
	}
	for range jobs {
		if end := e.waitEnd(); end.State != accounting.StateCompleted {
			t.Errorf("job %d ended %s %s: %s", end.JobID, end.State, end.ExitString(), end.Reason)
		}
	}
	for i := range uint64(jobs) {
		out := readFile(t, filepath.Join(e.work, fmt.Sprintf("slurm-%d.out", 40+i)))
		if got := heldFDs(strings.Split(out, "\n")); !slices.Equal(got, want) {
			t.Errorf("job %d held descriptors %v, want %v:\n%s", 40+i, got, want, out)
		}
	}
}

// strayDescriptors opens descriptors without close-on-exec in the test
// process, as an agent inherits them from the shell that started it (a
// file and both ends of a pipe); they are closed when the test ends.
func strayDescriptors(t *testing.T) {
	t.Helper()
	fd, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // pipe2 without O_CLOEXEC
		syscall.Close(fd)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, fd := range []int{fd, p[0], p[1]} {
			syscall.Close(fd)
		}
	})
}
