package shim

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/scheduler/agent/ctlfile"
)

// stage2 is the job's first program: a POSIX shell, already running as the
// job's user in its own process group, that waits on fd 3 until the shim
// has put it into the cgroup, then opens the output files as the user,
// enters the working directory (falling back to /tmp as slurmstepd does)
// and execs the job. A shell keeps this step free of any binary the user
// might not be allowed to execute. $1 dir, $2 stdin, $3 stdout, $4 stderr
// ("" shares stdout), $5 append (1/0), $6 umask, then the job's argv.
const stage2 = `IFS= read -r go <&3 || exit 125
[ "$go" = go ] || exit 125
exec 3<&-
umask "$6"
if [ "$5" = 1 ]; then exec >>"$3"; else exec >"$3"; fi
if [ -z "$4" ] || [ "$4" = "$3" ]; then exec 2>&1
elif [ "$5" = 1 ]; then exec 2>>"$4"
else exec 2>"$4"; fi
exec <"$2"
if ! cd "$1" 2>/dev/null; then
	echo "parity: could not chdir to $1, going to /tmp instead" >&2
	cd /tmp || exit 1
fi
` + RestoreStartupVars + `shift 6
exec "$@"
`

// BASH_ENV and ENV would make a stage-2 shell run user code before it
// joins the cgroup: ParkStartupVar gives the name they travel under, and
// RestoreStartupVars (shell lines) puts them back just before the exec.
// The agent's step tasks use the same pair.
const RestoreStartupVars = `if [ -n "${PARITY_SHIM_BASH_ENV+x}" ]; then export BASH_ENV="$PARITY_SHIM_BASH_ENV"; unset PARITY_SHIM_BASH_ENV; fi
if [ -n "${PARITY_SHIM_ENV+x}" ]; then export ENV="$PARITY_SHIM_ENV"; unset PARITY_SHIM_ENV; fi
`

// ParkStartupVar is the name an environment variable travels under into
// a stage-2 shell.
func ParkStartupVar(name string) string {
	switch name {
	case "BASH_ENV":
		return "PARITY_SHIM_BASH_ENV"
	case "ENV":
		return "PARITY_SHIM_ENV"
	}
	return name
}

// sweepTimeout bounds how long the shim keeps killing leftovers.
const sweepTimeout = 10 * time.Second

// Main runs the supervisor: args is ["serve"], and descriptor 3 is the
// listening socket the agent made for it. It returns the process exit
// code once no agent is connected and every job's end is recorded.
func Main(args []string) int {
	if len(args) != 1 || args[0] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: parity-shim serve  (started by the node agent, with its socket as descriptor 3)")
		return 2
	}
	lf := os.NewFile(3, "supervisor socket")
	ln, err := net.FileListener(lf)
	lf.Close() // FileListener holds a close-on-exec copy; 3 itself would reach every job
	if err != nil {
		fmt.Fprintf(os.Stderr, "shim: descriptor 3 is not a listening socket: %v\n", err)
		return 2
	}
	// Jobs get their umask from the launcher thread, files the supervisor
	// creates for them an explicit mode: its own umask stays out of both.
	syscall.Umask(0)
	catchSignals()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "shim: become subreaper: %v\n", err)
	}
	if err := serve(ln); err != nil {
		fmt.Fprintf(os.Stderr, "shim: %v\n", err)
		return 1
	}
	return 0
}

// catchSignals keeps stray terminal or group signals from taking the
// recorder down. They are caught, not ignored: an ignored signal stays
// ignored in the job across exec and a shell cannot trap it again, while a
// caught one is reset to its default in the child. Catching also undoes an
// ignore the shim may have inherited from whoever started the agent.
func catchSignals() {
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGUSR1,
		syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	go func() {
		for range ch {
		}
	}()
}

// recordWait keeps how the job ended: its exit code, or its signal and
// whether it dumped core.
func (st *Status) recordWait(ws syscall.WaitStatus) {
	switch {
	case ws.Exited():
		st.ExitCode = ws.ExitStatus()
	case ws.Signaled():
		st.Signal, st.CoreDumped = int(ws.Signal()), ws.CoreDump()
	}
}

// stage2Args is the stage-2 shell's command line for cfg.
func stage2Args(cfg Config) []string {
	stdin := cfg.Stdin
	if stdin == "" {
		stdin = os.DevNull
	}
	appendFlag := "0"
	if cfg.Append {
		appendFlag = "1"
	}
	return append([]string{"/bin/sh", "-c", stage2, "parity-job", cfg.Dir, stdin, cfg.Stdout, cfg.Stderr, appendFlag,
		fmt.Sprintf("%04o", cfg.Umask&0o777)}, cfg.Argv...)
}

// stage2Env is the job's environment with BASH_ENV and ENV parked.
func stage2Env(cfg Config) []string {
	env := make([]string, 0, len(cfg.Env))
	for _, kv := range cfg.Env {
		if k, v, _ := strings.Cut(kv, "="); ParkStartupVar(k) != k {
			kv = ParkStartupVar(k) + "=" + v
		}
		env = append(env, kv)
	}
	return env
}

// join writes pid into every hierarchy's cgroup.procs.
func join(files []string, pid int) error {
	v := strconv.Itoa(pid)
	for _, f := range files {
		if err := ctlfile.Write(f, v); err != nil {
			return fmt.Errorf("join cgroup %s: %w", f, err)
		}
	}
	return nil
}

// sweep kills what the script left behind: its process group, then every
// member of the cgroup until it is empty (a setsid'ed daemon escapes the
// group but not the cgroup) or the deadline.
func sweep(files []string, pgid int) {
	deadline := time.Now().Add(sweepTimeout)
	if pgid > 0 {
		killGroup(pgid, deadline)
	}
	if len(files) == 0 {
		return
	}
	delay := time.Millisecond
	for time.Now().Before(deadline) {
		pids, err := readPids(files[0])
		if err != nil || len(pids) == 0 {
			return
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(delay) // no v1 notification for "cgroup empty"; poll with backoff
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// killGroup SIGKILLs a process group and waits (its members are reaped
// by the launcher thread, as the supervisor is their subreaper) until the
// group is gone or the deadline.
func killGroup(pgid int, deadline time.Time) {
	syscall.Kill(-pgid, syscall.SIGKILL)
	delay := time.Millisecond
	for time.Now().Before(deadline) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(delay) // dying members are not yet reaped; poll with backoff
		delay = min(2*delay, 50*time.Millisecond)
	}
}

func readPids(file string) ([]int, error) {
	b, err := ctlfile.Read(file)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}
