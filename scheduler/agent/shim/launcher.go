package shim

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// One OS thread of the supervisor, the launcher, forks every job and
// reaps every child. A job held at its exec is traced by the thread that
// forked it, and only that thread may release it; and a wait for any
// child made elsewhere could swallow the stop that holds it. So forks,
// holds and waits all happen here, one after the other, and everything
// slow (opening output files as the user, writing statuses, sweeping
// leftovers) happens on other goroutines.

// launch asks the launcher thread to start a job.
type launch struct {
	j *sjob
	// files are the job's standard files, already opened as its user,
	// for a direct start; nil starts it through the stage-2 shell.
	files *stdio
	done  chan launched
}

type launched struct {
	pid int
	how string
	err error
}

// launch starts j and returns once it runs in its cgroup (or could not be
// started).
func (s *server) launch(j *sjob) launched {
	l := launch{j: j, done: make(chan launched, 1)}
	if directApplies(j.cfg) {
		if f, err := openAsJob(j.cfg, s.jobsNull); err == nil {
			l.files = &f
		}
	}
	s.starts <- l
	return <-l.done
}

// sharedNull returns fd (the supervisor's /dev/null) for jobs to share,
// or -1 when it is not the basic null device: jobs then open the path
// themselves, checked like any other.
func sharedNull(fd int) int {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || !pseudoDevice(unix.Major(st.Rdev), unix.Minor(st.Rdev)) {
		return -1
	}
	return fd
}

// directApplies says whether the direct path may be tried: the shell
// resolves a bare command through the job's PATH, and says what it does
// about a missing directory.
func directApplies(cfg Config) bool {
	return strings.Contains(cfg.Argv[0], "/") && cfg.Dir != ""
}

// launcher is the launcher thread's loop; it never returns.
func (s *server) launcher() {
	runtime.LockOSThread() // for good: the thread is the tracer of every held job
	// A file-system context of its own, so the umask set for each job
	// below is this thread's alone (a forked job inherits it).
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		fmt.Fprintf(os.Stderr, "shim: launcher thread: unshare CLONE_FS: %v; jobs get umask 0022\n", err)
		syscall.Umask(0o022)
	}
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)
	for {
		select {
		case l := <-s.starts:
			syscall.Umask(l.j.cfg.Umask & 0o777)
			l.done <- s.fork(l)
		case <-sigchld:
		}
		s.reap()
	}
}

// fork starts one job, directly when its files were opened and that
// works, else through the stage-2 shell. The job is registered before the
// next reap, which runs on this same thread, so its end cannot be missed.
func (s *server) fork(l launch) launched {
	cfg := l.j.cfg
	if err := SealDescriptors(); err != nil {
		if l.files != nil {
			l.files.close()
		}
		return launched{err: fmt.Errorf("start job: %w", err)}
	}
	if l.files != nil {
		pid, err := startHeld(cfg, *l.files)
		l.files.close()
		if err == nil {
			if err := join(cfg.ProcsFiles, pid); err != nil {
				reapKilled(pid)
				return launched{err: err}
			}
			if err := syscall.PtraceDetach(pid); err != nil {
				reapKilled(pid)
				return launched{err: fmt.Errorf("release job: %w", err)}
			}
			s.register(l.j, pid, StartDirect)
			return launched{pid: pid, how: StartDirect}
		}
	}
	pid, err := s.startStage2(cfg)
	if err != nil {
		return launched{err: err}
	}
	s.register(l.j, pid, StartShell)
	return launched{pid: pid, how: StartShell}
}

func (s *server) register(j *sjob, pid int, how string) {
	s.mu.Lock()
	j.st.Pid, j.st.Start, j.st.Started = pid, how, time.Now()
	s.byPid[pid] = j
	s.mu.Unlock()
}

// startStage2 starts the job's stage-2 shell, puts it into the job's
// cgroup and releases it.
func (s *server) startStage2(cfg Config) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("release pipe: %w", err)
	}
	defer w.Close()
	attr := &syscall.ProcAttr{Dir: "/", Env: stage2Env(cfg),
		// Until stage 2 redirects, its output is the supervisor's log.
		Files: []uintptr{uintptr(s.devNull), os.Stderr.Fd(), os.Stderr.Fd(), r.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true}}
	if c := cfg.Credential; c != nil {
		attr.Sys.Credential = &syscall.Credential{Uid: c.UID, Gid: c.GID, Groups: c.Groups}
	}
	pid, err := syscall.ForkExec("/bin/sh", stage2Args(cfg), attr)
	r.Close()
	if err != nil {
		return 0, fmt.Errorf("start job: %w", err)
	}
	if err := join(cfg.ProcsFiles, pid); err != nil {
		// Closing the pipe unreleased makes stage 2 exit 125 at once.
		w.Close()
		reapKilled(pid)
		return 0, err
	}
	if _, err := w.Write([]byte("go\n")); err != nil {
		reapKilled(pid)
		return 0, fmt.Errorf("release job: %w", err)
	}
	return pid, nil
}

// reap collects every child that has ended: job leaders (whose ends are
// then recorded) and the orphans they left, which the supervisor inherits
// as a subreaper.
func (s *server) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|syscall.WALL, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
		if ws.Exited() || ws.Signaled() {
			s.exited(pid, ws)
		}
	}
}

// reapKilled ends a child this thread started and has not released (or
// just failed to) and collects it.
func reapKilled(pid int) {
	syscall.Kill(pid, syscall.SIGKILL)
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}
