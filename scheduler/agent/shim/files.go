package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/scheduler/agent/ctlfile"
)

// Config is everything the supervisor needs to start a job, sent by the
// agent over the supervisor's socket. The job never sees it.
type Config struct {
	JobID string `json:"jobId"`
	// Argv is the job's command; Argv[0] is executed directly (a batch
	// script runs through its #! line).
	Argv []string `json:"argv"`
	// Env is the job's complete environment, KEY=VALUE.
	Env []string `json:"env"`
	// Dir is the working directory, entered as the job's user.
	Dir string `json:"dir"`
	// Credential switches to UID/GID/Groups when set (the agent is root
	// and the job belongs to someone else).
	Credential *Credential `json:"credential,omitempty"`
	// Stdin, Stdout and Stderr are opened as the job's user; Stderr ""
	// shares Stdout's file, Stdin "" is /dev/null.
	Stdin  string `json:"stdin,omitempty"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr,omitempty"`
	// Append opens the output files for appending instead of truncating.
	Append bool `json:"append,omitempty"`
	// Umask for files the job creates (octal as a number, e.g. 0o022).
	Umask int `json:"umask"`
	// ProcsFiles are the cgroup.procs files the job joins before it runs;
	// none means no isolation.
	ProcsFiles []string `json:"procsFiles,omitempty"`
	// StatusFile is where the supervisor records how the job ended.
	StatusFile string `json:"statusFile"`
}

// Credential is the identity the job runs as.
type Credential struct {
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
}

// Status is what the supervisor records once the job has ended (Done).
type Status struct {
	ShimPid int `json:"shimPid"`
	// Pid is the job's leader (and its process group id).
	Pid     int       `json:"pid,omitempty"`
	Started time.Time `json:"started,omitzero"`
	Done    bool      `json:"done,omitempty"`
	Ended   time.Time `json:"ended,omitzero"`
	// ExitCode is the exit status when the job exited; Signal the signal
	// that ended it otherwise (then ExitCode is 0, as Slurm's "0:9").
	ExitCode   int  `json:"exitCode"`
	Signal     int  `json:"signal,omitempty"`
	CoreDumped bool `json:"coreDumped,omitempty"`
	// StartError says why the job could not be started at all.
	StartError string `json:"startError,omitempty"`
	// Start says how the job was started: StartDirect or StartShell.
	Start string `json:"start,omitempty"`
}

// How a job was started.
const (
	// StartDirect: forked and held at its exec by the shim itself.
	StartDirect = "direct"
	// StartShell: through the stage-2 shell, which waits for its release.
	StartShell = "shell"
)

// validate checks what a supervisor cannot do without.
func (cfg Config) validate() error {
	if cfg.JobID == "" {
		return fmt.Errorf("shim: config: job id is empty")
	}
	if len(cfg.Argv) == 0 || cfg.Argv[0] == "" {
		return fmt.Errorf("shim: config of job %s: argv is empty", cfg.JobID)
	}
	if cfg.StatusFile == "" {
		return fmt.Errorf("shim: config of job %s: status file is empty", cfg.JobID)
	}
	return nil
}

// ReadStatus loads the status file; a missing file is reported with
// os.ErrNotExist (the shim has not got that far, or never ran).
func ReadStatus(path string) (Status, error) {
	var st Status
	err := readJSON(path, &st)
	return st, err
}

// writeStatus records st, the job's only status: a reader sees no file,
// an empty one (the supervisor died writing it: the job is lost) or all
// of it.
func writeStatus(path string, st Status) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("shim: encode %s: %w", path, err)
	}
	return WriteFileOnce(path, append(b, '\n'), 0o644)
}

// The spool's files are written and read with plain system calls: an
// os.File costs a poller registration, a flags query and a finalizer,
// which for the three or four files of each job was a tenth of the
// supervisor's and the agent's system calls.

// WriteFileOnce writes a file's first and only version in one write,
// without the temporary file and rename of WriteFileAtomic (two inode
// operations less). A writer that dies meanwhile leaves an empty file or,
// for more than a page, a short one, which does not decode: readers take
// that for no file at all. Later versions must go through
// WriteFileAtomic.
func WriteFileOnce(path string, data []byte, perm os.FileMode) error {
	if err := writeNew(path, data, perm, false); err != nil {
		return fmt.Errorf("shim: write %s: %w", path, err)
	}
	return nil
}

// WriteFileAtomic writes data to a temporary file next to path and renames
// it over path, so a reader, or an agent restarted after a crash, sees
// either the old or the new content, never half a file. It does not fsync:
// the page cache survives the crash of a process (agent or shim), which is
// what re-attach recovers from, while a machine crash kills the jobs these
// files describe anyway; two fsyncs per write were most of a job's launch
// and end cost on a busy disk. One writer at a time per path: the
// temporary file's name is fixed (a crash leaves at most one, overwritten
// by the next write).
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	err := writeNew(tmp, data, perm, true)
	if err == nil {
		err = unix.Rename(tmp, path)
	}
	if err != nil {
		unix.Unlink(tmp)
		return fmt.Errorf("shim: write %s: %w", path, err)
	}
	return nil
}

// writeNew writes data as path's whole content; exact sets perm on the
// file itself, past the umask.
func writeNew(path string, data []byte, perm os.FileMode, exact bool) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return err
	}
	if exact {
		err = unix.Fchmod(fd, uint32(perm.Perm()))
	}
	for len(data) > 0 && err == nil {
		var n int
		n, err = unix.Write(fd, data)
		if errors.Is(err, unix.EINTR) {
			err = nil
		}
		data = data[max(n, 0):] // n is -1 with an error
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

func readJSON(path string, v any) error {
	b, err := ctlfile.ReadValue(path)
	if err != nil {
		return fmt.Errorf("shim: read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("shim: decode %s: %w", path, err)
	}
	return nil
}
