package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	gm "github.com/onsi/gomega"

	"golang.org/x/sys/unix"
)

// FDsReport is what `conform probe fds` prints: the descriptors the job
// was started with, each with what it refers to.
type FDsReport struct {
	FDs map[string]string `json:"fds"` // descriptor number → its /proc/self/fd link
}

// specDescriptors: a job starts holding its standard input, output and
// error and nothing else of whoever started it (the agent, its
// supervisor, the shell that started them, another job starting at the
// same moment). The job holds a GPU where the vendor has one, so the
// driver's preparation is part of what is checked.
func specDescriptors(e *Env) {
	e.NeedWorkDir()
	gpus := 0
	if e.Vendor.HasGPUs() {
		gpus = 1
	}
	args := append(e.Target.ProbeCommand(), "fds")
	id := e.Submit(JobShape{Name: "descriptors", GPUs: gpus, CPUs: 1, Nodelist: e.Vendor.Nodes[:1], Script: "exec " + shellQuote(args)})
	j := e.WaitEnded(id)
	out := e.Output(id)
	var rep FDsReport
	if j.GetState() != "COMPLETED" {
		e.Failf("the descriptors job did not complete: %s; output: %s", describeJob(j), truncateText(out, 500))
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		e.Failf("the descriptors job's output is not a descriptor report (%v): %s", err, truncateText(out, 500))
	}
	fds := make([]string, 0, len(rep.FDs))
	for fd := range rep.FDs {
		fds = append(fds, fd)
	}
	slices.SortFunc(fds, func(a, b string) int { return atoiOr(a) - atoiOr(b) })
	held := make([]string, len(fds))
	for i, fd := range fds {
		held[i] = fd + " → " + rep.FDs[fd]
	}
	e.Evidence("descriptors", fmt.Sprintf("job %d on %s started with: %s", id, e.Vendor.Nodes[0], strings.Join(held, ", ")), rep.FDs)
	e.Observe("descriptors", strings.Join(fds, ","))
	e.Expect(fds).To(gm.Equal([]string{"0", "1", "2"}), "descriptors job %d was started with: %s", id, strings.Join(held, ", "))
}

func atoiOr(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func probeFDs(args []string, stdout io.Writer) error {
	if len(args) != 0 {
		return fmt.Errorf("fds takes no arguments, got %q", args)
	}
	fds, err := inheritedFDs()
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(FDsReport{FDs: fds})
}

// inheritedFDs lists the process's descriptors that survive an exec:
// those it was started with. Every descriptor the probe opens itself (Go
// opens them all close-on-exec) is left out, so the listing is exactly
// what the job got however the Go runtime started.
func inheritedFDs() (map[string]string, error) {
	d, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("fds: %w", err)
	}
	dir := os.NewFile(uintptr(d), "/proc/self/fd")
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("fds: %w", err)
	}
	out := map[string]string{}
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd == d {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // closed meanwhile, or the probe's own
		}
		target, err := os.Readlink("/proc/self/fd/" + n)
		if err != nil {
			target = "(" + err.Error() + ")"
		}
		out[n] = target
	}
	return out, nil
}
