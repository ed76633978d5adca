package shim

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// Main runs the shim: args is the path of its Config. It returns the
// process exit code: 0 once the job's status is recorded, non-zero when
// the shim could not record one (the agent then reports the job lost).
func Main(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: shim CONFIG.json")
		return 2
	}
	cfg, err := ReadConfig(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	catchSignals()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "shim: job %s: become subreaper: %v\n", cfg.JobID, err)
	}
	st := Status{ShimPid: os.Getpid()}
	runErr := run(cfg, &st)
	if runErr != nil {
		st.StartError = runErr.Error()
		fmt.Fprintf(os.Stderr, "shim: job %s: %v\n", cfg.JobID, runErr)
	}
	st.Running, st.Done, st.Ended = false, true, time.Now()
	code := 0
	if err := writeStatus(cfg.StatusFile, st); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	// Leftovers die even when the status could not be written. Once the
	// cgroup is empty every descendant is dead or dying, so a blocking reap
	// ends; without a cgroup a setsid'ed escapee may live on, so only what
	// has died is collected.
	reap(sweep(cfg.ProcsFiles, st.Pid))
	return code
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

func run(cfg Config, st *Status) error {
	syscall.Umask(cfg.Umask & 0o777) // the job's, for the files it and the direct path create
	if err := runDirect(cfg, st); !errors.Is(err, errUseStage2) {
		return err
	}
	st.Start = StartShell
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("release pipe: %w", err)
	}
	defer w.Close()
	cmd := stage2Cmd(cfg, r)
	err = cmd.Start()
	r.Close()
	if err != nil {
		return fmt.Errorf("start job: %w", err)
	}
	st.Pid = cmd.Process.Pid
	if err := join(cfg.ProcsFiles, st.Pid); err != nil {
		// Closing the pipe unreleased makes stage 2 exit 125 at once.
		w.Close()
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	st.Running, st.Started = true, time.Now()
	if err := writeStatus(cfg.StatusFile, *st); err != nil {
		w.Close()
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	if _, err := w.Write([]byte("go\n")); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("release job: %w", err)
	}
	w.Close()
	cmd.Wait() // the wait status below is the result; a non-zero exit is not an error here
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return fmt.Errorf("job %d: no wait status", st.Pid)
	}
	st.recordWait(ws)
	return nil
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

func stage2Cmd(cfg Config, release *os.File) *exec.Cmd {
	stdin := cfg.Stdin
	if stdin == "" {
		stdin = os.DevNull
	}
	appendFlag := "0"
	if cfg.Append {
		appendFlag = "1"
	}
	args := append([]string{"-c", stage2, "parity-job", cfg.Dir, stdin, cfg.Stdout, cfg.Stderr, appendFlag,
		fmt.Sprintf("%04o", cfg.Umask&0o777)}, cfg.Argv...)
	cmd := exec.Command("/bin/sh", args...)
	cmd.Env = make([]string, 0, len(cfg.Env))
	for _, kv := range cfg.Env {
		if k, v, _ := strings.Cut(kv, "="); ParkStartupVar(k) != k {
			kv = ParkStartupVar(k) + "=" + v
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr // the shim's log, until stage 2 redirects
	cmd.ExtraFiles = []*os.File{release}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if c := cfg.Credential; c != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: c.UID, Gid: c.GID, Groups: c.Groups}
	}
	return cmd
}

// join writes pid into every hierarchy's cgroup.procs.
func join(files []string, pid int) error {
	for _, f := range files {
		if err := os.WriteFile(f, []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("join cgroup %s: %w", f, err)
		}
	}
	return nil
}

// sweep kills what the script left behind: its process group, then every
// member of the cgroup until it is empty (a setsid'ed daemon escapes the
// group but not the cgroup). It reports whether the cgroup was emptied.
func sweep(files []string, pgid int) bool {
	deadline := time.Now().Add(sweepTimeout)
	if pgid > 0 {
		killGroup(pgid, deadline)
	}
	if len(files) == 0 {
		return false
	}
	delay := time.Millisecond
	for time.Now().Before(deadline) {
		pids, err := readPids(files[0])
		if err != nil {
			return false
		}
		if len(pids) == 0 {
			return true
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		reap(false)
		time.Sleep(delay) // no v1 notification for "cgroup empty"; poll with backoff
		delay = min(2*delay, 50*time.Millisecond)
	}
	return false
}

// killGroup SIGKILLs a process group and reaps its members (orphans are
// the shim's, as subreaper) until the group is gone or the deadline.
func killGroup(pgid int, deadline time.Time) {
	syscall.Kill(-pgid, syscall.SIGKILL)
	delay := time.Millisecond
	for time.Now().Before(deadline) {
		var ws syscall.WaitStatus
		if pid, _ := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil); pid > 0 {
			continue
		}
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(delay) // dying members are not yet reparented; poll with backoff
		delay = min(2*delay, 50*time.Millisecond)
	}
}

func readPids(file string) ([]int, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil {
			out = append(out, p)
		}
	}
	return out, sc.Err()
}

// reap collects orphans reparented to the shim: all of them when block is
// set, else only those already dead.
func reap(block bool) {
	opts := syscall.WNOHANG
	if block {
		opts = 0
	}
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, opts, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
