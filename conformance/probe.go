package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Probe results for one opened path.
const (
	OpenOK = "ok"
)

// ProbeReport is what `conform probe inspect` prints from inside a job:
// what the job can see and open.
type ProbeReport struct {
	UID  int               `json:"uid"`
	Env  map[string]string `json:"env"`
	Open map[string]string `json:"open"` // path → "ok" or the errno name (ENXIO, EPERM…)
	// ReadOnly lists paths whose mode refused a read-write open (EACCES)
	// and were opened read-only instead, so the device rule was still tried.
	ReadOnly []string `json:"readOnly,omitempty"`
	// CPUs is the job's Cpus_allowed_list from /proc/self/status.
	CPUs string `json:"cpus"`
	// Files maps a variable (from --read) to the content of the file it
	// names, or "error: ..." when the job could not read it.
	Files map[string]string `json:"files,omitempty"`
}

// ProcsReport is what `conform probe procs MARKER` prints: the processes
// (other than itself) whose command line holds the marker as one argument.
type ProcsReport struct {
	Matches []string `json:"matches"` // "pid: cmdline"
}

// ProbeMain runs the job-side probe: `inspect --env A,B --open P,Q`,
// `mem MB` (allocate and touch that much memory), `procs MARKER` or
// `fds` (the descriptors the job was started with). It writes its result
// to stdout and returns the exit status.
func ProbeMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "probe: want inspect, mem, procs or fds")
		return 2
	}
	var err error
	switch args[0] {
	case "inspect":
		err = probeInspect(args[1:], stdout)
	case "mem":
		err = probeMem(args[1:], stdout)
	case "procs":
		err = probeProcs(args[1:], stdout)
	case "fds":
		err = probeFDs(args[1:], stdout)
	case "cgroup":
		err = probeCgroup(args[1:], stdout)
	default:
		err = fmt.Errorf("unknown probe %q (want inspect, mem, procs or fds)", args[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, "probe:", err)
		return 1
	}
	return 0
}

func probeInspect(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	envs := fs.String("env", "", "comma-separated variables to report")
	opens := fs.String("open", "", "comma-separated paths to open")
	reads := fs.String("read", "", "comma-separated variables naming files to read")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rep := ProbeReport{UID: os.Getuid(), Env: map[string]string{}, Open: map[string]string{}}
	for _, k := range splitList(*reads) {
		if rep.Files == nil {
			rep.Files = map[string]string{}
		}
		path, ok := os.LookupEnv(k)
		if !ok {
			rep.Files[k] = "error: the variable is not set"
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			rep.Files[k] = "error: " + err.Error()
			continue
		}
		rep.Files[k] = string(b)
	}
	for _, k := range splitList(*envs) {
		if v, ok := os.LookupEnv(k); ok {
			rep.Env[k] = v
		}
	}
	for _, p := range splitList(*opens) {
		res := openResult(p, unix.O_RDWR)
		if res == "EACCES" {
			res = openResult(p, unix.O_RDONLY)
			rep.ReadOnly = append(rep.ReadOnly, p)
		}
		rep.Open[p] = res
	}
	cpus, err := allowedCPUs("/proc/self/status")
	if err != nil {
		return err
	}
	rep.CPUs = cpus
	return json.NewEncoder(stdout).Encode(rep)
}

// openResult opens path (read-write, as a GPU runtime does, or read-only)
// and names the outcome.
func openResult(path string, mode int) string {
	fd, err := unix.Open(path, mode|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err == nil {
		unix.Close(fd)
		return OpenOK
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
		return "errno " + strconv.Itoa(int(errno))
	}
	return err.Error()
}

func allowedCPUs(statusPath string) (string, error) {
	f, err := os.Open(statusPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s has no Cpus_allowed_list", statusPath)
}

// probeMem allocates and touches MB mebibytes, page by page, so the memory
// is really charged to the job's group.
func probeMem(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("mem wants one argument, MB")
	}
	mb, err := strconv.Atoi(args[0])
	if err != nil || mb <= 0 {
		return fmt.Errorf("mem: %q is not a positive number of MB", args[0])
	}
	chunks := make([][]byte, 0, mb)
	for i := 0; i < mb; i++ {
		c := make([]byte, 1<<20)
		for j := 0; j < len(c); j += 4096 {
			c[j] = 1
		}
		chunks = append(chunks, c)
	}
	_, err = fmt.Fprintf(stdout, "touched %d MB\n", len(chunks))
	return err
}

func probeProcs(args []string, stdout io.Writer) error {
	if len(args) != 1 || args[0] == "" {
		return fmt.Errorf("procs wants one argument, the marker")
	}
	matches, err := findProcs("/proc", args[0], os.Getpid())
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(ProcsReport{Matches: matches})
}

// findProcs lists processes under procRoot, other than self, one of whose
// arguments equals marker.
func findProcs(procRoot, marker string, self int) ([]string, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	matches := []string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "cmdline"))
		if err != nil {
			continue // the process ended meanwhile
		}
		argv := bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0})
		for _, a := range argv {
			if string(a) == marker {
				matches = append(matches, fmt.Sprintf("%d: %s", pid, bytes.Join(argv, []byte(" "))))
				break
			}
		}
	}
	return matches, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
