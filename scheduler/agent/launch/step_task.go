package launch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"

	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/agent/shim"
)

// stepStage2 is each task's first program, as the batch shim's stage 2:
// a shell already running as the job's user that waits on fd 3 until the
// agent has put it into the step's cgroup, enters the working directory
// and execs the task. $1 is the directory, then the task's argv.
const stepStage2 = `IFS= read -r go <&3 || exit 125
[ "$go" = go ] || exit 125
exec 3<&-
if ! cd "$1" 2>/dev/null; then
	echo "parity: could not chdir to $1, going to /tmp instead" >&2
	cd /tmp || exit 1
fi
` + shim.RestoreStartupVars + `shift
exec "$@"
`

// start launches every task held at its stage 2, puts each into the step
// group and releases them. On error the tasks started so far are
// returned for the caller to kill and reap.
func (st *Step) start(cred *shim.Credential, sio StepIO) ([]*taskProc, error) {
	var tasks []*taskProc
	var releases []*os.File
	defer func() {
		for _, w := range releases {
			w.Close()
		}
	}()
	for _, t := range st.spec.Tasks {
		tp, release, err := st.startTask(t, cred, sio)
		if tp != nil {
			tasks = append(tasks, tp)
		}
		if err != nil {
			return tasks, err
		}
		releases = append(releases, release)
	}
	for _, w := range releases {
		if _, err := w.Write([]byte("go\n")); err != nil {
			return tasks, fmt.Errorf("launch: step %d.%d: release task: %w", st.spec.JobID, st.spec.StepID, err)
		}
	}
	return tasks, nil
}

func (st *Step) startTask(t StepTask, cred *shim.Credential, sio StepIO) (*taskProc, *os.File, error) {
	id := fmt.Sprintf("%d.%d task %d", st.spec.JobID, st.spec.StepID, t.Rank)
	relR, relW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("launch: step %s: release pipe: %w", id, err)
	}
	defer relR.Close()
	pty := st.spec.PTY && t.Rank == 0
	outR, outW, errR, errW, err := taskOutputs(pty, cred)
	if err != nil {
		relW.Close()
		return nil, nil, fmt.Errorf("launch: step %s: %w", id, err)
	}
	env := make(map[string]string, len(t.Env))
	for k, v := range t.Env {
		env[shim.ParkStartupVar(k)] = v
	}
	args := append([]string{"-c", stepStage2, "parity-step", st.spec.WorkDir}, st.spec.Argv...)
	cmd := exec.Command("/bin/sh", args...)
	cmd.Env = envList(env)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.ExtraFiles = []*os.File{relR}
	// Its own process group: a terminal's signals to the agent do not
	// reach it, and without a cgroup the group is what a kill reaches.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if pty {
		// Its own session, with the terminal as its controlling one.
		cmd.Stdin, cmd.Stderr = outW, outW
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}
	if cred != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: cred.UID, Gid: cred.GID, Groups: cred.Groups}
	}
	// Only the files named above reach the task (see SealDescriptors).
	if err = shim.SealDescriptors(); err == nil {
		err = cmd.Start()
	}
	outW.Close()
	if errW != nil {
		errW.Close()
	}
	if err != nil {
		relW.Close()
		outR.Close()
		if errR != nil {
			errR.Close()
		}
		return nil, nil, fmt.Errorf("launch: step %s: start: %w", id, err)
	}
	tp := &taskProc{rank: t.Rank, cmd: cmd}
	st.mu.Lock()
	st.pids = append(st.pids, cmd.Process.Pid)
	st.mu.Unlock()
	if pty {
		st.mu.Lock()
		st.pty = outR
		st.mu.Unlock()
		tp.readers.Add(1)
		go func() {
			defer tp.readers.Done()
			// The master stays open for Stdin until the step is forgotten.
			forwardRaw(outR, func(b []byte) { sio.Output(t.Rank, 1, b) })
		}()
	}
	for stream, r := range map[int]*os.File{1: outR, 2: errR} {
		if pty {
			break
		}
		tp.readers.Add(1)
		go func() {
			defer tp.readers.Done()
			defer r.Close()
			forwardLines(r, func(b []byte) { sio.Output(t.Rank, stream, b) })
		}()
	}
	if st.group != nil {
		g, err := st.taskGroup(t)
		if err != nil {
			relW.Close()
			return tp, nil, fmt.Errorf("launch: step %s: %w", id, err)
		}
		if err := joinGroup(g.ProcsFiles(), cmd.Process.Pid); err != nil {
			relW.Close() // stage 2 exits 125 unreleased
			return tp, nil, fmt.Errorf("launch: step %s: %w", id, err)
		}
	}
	return tp, relW, nil
}

// taskGroup is the group a task joins: the step's, or for a task bound
// to devices a task group below it that allows only those.
func (st *Step) taskGroup(t StepTask) (cgroup.Group, error) {
	if t.DeviceFiles == nil {
		return st.group, nil
	}
	g, err := st.group.Child("task_"+strconv.FormatUint(uint64(t.Rank), 10), cgroup.Resources{Devices: cgroup.DeviceRules(t.DeviceFiles)})
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	st.tasks = append(st.tasks, g)
	st.mu.Unlock()
	return g, nil
}

// taskOutputs makes a task's stdout and stderr: two pipes, or one
// pseudo-terminal (errR and errW nil) owned by the task's user.
func taskOutputs(pty bool, cred *shim.Credential) (outR, outW, errR, errW *os.File, err error) {
	if pty {
		master, slave, err := openPTY()
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if cred != nil {
			if err := chownPTY(slave, cred.UID, cred.GID); err != nil {
				master.Close()
				slave.Close()
				return nil, nil, nil, nil, err
			}
		}
		return master, slave, nil, nil, nil
	}
	outR, outW, err = os.Pipe()
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("output pipe: %w", err)
	}
	errR, errW, err = os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, nil, nil, fmt.Errorf("error pipe: %w", err)
	}
	return outR, outW, errR, errW, nil
}

// joinGroup writes pid into each cgroup.procs file.
func joinGroup(files []string, pid int) error {
	for _, f := range files {
		if err := os.WriteFile(f, []byte(fmt.Sprint(pid)), 0); err != nil {
			return fmt.Errorf("join cgroup %s: %w", f, err)
		}
	}
	return nil
}

// maxLine bounds one forwarded chunk; longer lines go in pieces.
const maxLine = 64 << 10

// forwardLines hands r's content to out a line at a time.
func forwardLines(r io.Reader, out func([]byte)) {
	br := bufio.NewReaderSize(r, maxLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			out(slices.Clone(line))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// supervise waits for the tasks, kills what they left in the step's
// group, waits for the output to drain, then reports every task's end
// and removes the step.
func (st *Step) supervise(tasks []*taskProc, sio StepIO) {
	defer close(st.done)
	exits := make([]TaskExit, 0, len(tasks))
	for _, tp := range tasks {
		tp.cmd.Wait() // the wait status is the result
		e := TaskExit{Task: tp.rank}
		if ws, ok := tp.cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Exited():
				e.ExitCode = ws.ExitStatus()
			case ws.Signaled():
				e.Signal = int(ws.Signal())
			}
		}
		exits = append(exits, e)
	}
	// Slurm ends a step when its tasks end: whatever they left behind
	// (holding the output pipes open) dies with it.
	st.killAll()
	for _, tp := range tasks {
		tp.readers.Wait()
	}
	st.mu.Lock()
	st.exits = exits
	if st.pty != nil {
		st.pty.Close()
		st.pty = nil
	}
	st.mu.Unlock()
	for _, e := range exits {
		sio.Exit(e.Task, e.ExitCode, e.Signal)
	}
	st.runner.forget(st)
}
