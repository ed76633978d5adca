package launch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/agent/shim"
)

// defaultUmask is what a job's files get unless the spec says otherwise.
const defaultUmask = 0o022

// Launch starts the batch script of spec on this node and returns once
// its shim runs; the job's end arrives on Events. Launching a job this
// node already has (running, or ended and not yet forgotten) is a no-op,
// so a repeated order is harmless. An error means nothing was started.
func (r *Runtime) Launch(ctx context.Context, spec Spec) error {
	if err := spec.Validate(r.cfg.Node); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	id := spec.JobID
	dir := r.jobDir(id)
	j := &job{dir: dir, gpus: newGPUAggs(spec.GPUs, nil)}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	if _, ok := r.jobs[id]; ok {
		r.mu.Unlock()
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, stateFile)); err == nil {
		r.mu.Unlock()
		r.log.Info("launch order for a job this node already has; ignored", "job", id)
		return nil
	}
	r.jobs[id] = j
	r.busy.Add(1)
	r.mu.Unlock()
	defer r.busy.Done()

	j.mu.Lock()
	cmd, logf, err := r.start(j, spec)
	if err != nil {
		j.mu.Unlock()
		r.mu.Lock()
		delete(r.jobs, id)
		r.mu.Unlock()
		return err
	}
	r.armTimers(j)
	j.mu.Unlock()
	go r.watchChild(j, cmd, logf)
	r.log.Info("job launched", "job", id, "user", spec.User, "cpus", j.rec.CPUs.String(), "group", j.rec.JobGroup,
		"devices", len(spec.Prepared.DeviceFiles), "timeLimit", spec.TimeLimit)
	return nil
}

// start prepares the spool and the cgroups and starts the shim; on error
// it removes what it made. j.mu is held.
func (r *Runtime) start(j *job, spec Spec) (_ *exec.Cmd, _ *os.File, err error) {
	id := spec.JobID
	if err := os.MkdirAll(j.dir, 0o711); err != nil {
		return nil, nil, fmt.Errorf("launch: job %d: spool: %w", id, err)
	}
	defer func() {
		if err != nil {
			r.discard(j)
		}
	}()
	cred, err := r.credential(spec)
	if err != nil {
		return nil, nil, err
	}
	script := filepath.Join(j.dir, scriptFile)
	if err := writeScript(script, spec); err != nil {
		return nil, nil, err
	}
	stdout, stderr, stdin := spec.OutputPaths(r.cfg.Node)
	j.rec = Record{Spec: spec, Node: r.cfg.Node, Stdout: stdout, Stderr: stderr,
		CPUs: cgroup.MapCPUs(spec.CPUs, r.hostCPUs), Started: r.cfg.Clock.Now()}
	if spec.TimeLimit > 0 {
		j.rec.Deadline = j.rec.Started.Add(spec.TimeLimit)
	}
	var procs []string
	if r.cfg.Cgroups != nil {
		if err := r.createGroups(j); err != nil {
			return nil, nil, err
		}
		procs = j.step.ProcsFiles()
	}
	umask := defaultUmask
	if spec.Umask != nil {
		umask = *spec.Umask
	}
	cfg := shim.Config{JobID: fmt.Sprint(id), Argv: append([]string{script}, spec.Args...),
		Env: envList(spec.Environment(r.cfg.Node, spec.CPUs.Count())), Dir: spec.WorkDir, Credential: cred,
		Stdin: stdin, Stdout: stdout, Stderr: stderr, Append: spec.Append, Umask: umask,
		ProcsFiles: procs, StatusFile: j.statusPath()}
	cfgPath := filepath.Join(j.dir, shimConfig)
	if err := shim.WriteConfig(cfgPath, cfg); err != nil {
		return nil, nil, err
	}
	if err := j.persist(j.rec.Started); err != nil {
		return nil, nil, err
	}
	logf, err := os.OpenFile(filepath.Join(j.dir, shimLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("launch: job %d: shim log: %w", id, err)
	}
	args := append(append([]string(nil), r.cfg.Shim[1:]...), cfgPath)
	cmd := exec.Command(r.cfg.Shim[0], args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = j.dir
	// Its own session: the agent's terminal, process group and death do
	// not reach the shim, which must outlive an agent restart.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, nil, fmt.Errorf("launch: job %d: start shim %s: %w", id, r.cfg.Shim[0], err)
	}
	j.rec.ShimPid = cmd.Process.Pid
	if start, err := procStart(cmd.Process.Pid); err == nil {
		j.rec.ShimStart = start
	}
	if err := j.persist(r.cfg.Clock.Now()); err != nil {
		// The shim runs; Reattach falls back on the pid in its status file.
		r.log.Error("could not record the shim's pid", "job", id, "err", err)
	}
	return cmd, logf, nil
}

// createGroups makes the job's group (cpuset, memory, devices) and the
// batch step's group below it; j.mu is held.
func (r *Runtime) createGroups(j *job) error {
	spec := j.rec.Spec
	res := cgroup.Resources{CPUs: j.rec.CPUs.Host, MemoryLimit: spec.MemoryBytes,
		Devices: cgroup.DeviceRules(spec.Prepared.DeviceFiles)}
	g, err := r.cfg.Cgroups.Create(r.groupPath(spec.JobID), res)
	if err != nil {
		return fmt.Errorf("launch: job %d: %w", spec.JobID, err)
	}
	j.group = g
	step, err := g.Child("step_"+BatchStep, cgroup.Resources{})
	if err != nil {
		return fmt.Errorf("launch: job %d: %w", spec.JobID, err)
	}
	j.step = step
	j.rec.Isolated, j.rec.JobGroup, j.rec.StepGroup = true, g.Path(), step.Path()
	if j.rec.CPUs.Mapped {
		r.log.Warn("allocated CPUs exceed the host; mapped", "job", spec.JobID, "mapping", j.rec.CPUs.String())
	}
	return nil
}

// discard undoes a failed start: groups and spool directory. j.mu is held.
func (r *Runtime) discard(j *job) {
	for _, g := range []cgroup.Group{j.step, j.group} {
		if g != nil {
			if err := g.Delete(); err != nil {
				r.log.Warn("could not remove the group of a failed launch", "group", g.Path(), "err", err)
			}
		}
	}
	j.step, j.group = nil, nil
	os.RemoveAll(j.dir)
}

// credential is the identity the job switches to: none when it runs as
// the agent's own user, an error when that would need root.
func (r *Runtime) credential(spec Spec) (*shim.Credential, error) {
	euid := uint32(os.Geteuid())
	if spec.UID == euid && spec.GID == uint32(os.Getegid()) && spec.Groups == nil {
		return nil, nil
	}
	if euid != 0 {
		return nil, fmt.Errorf("launch: job %d: running as uid %d needs a root agent (this one is uid %d)", spec.JobID, spec.UID, euid)
	}
	groups := spec.Groups
	if groups == nil {
		g, err := r.cfg.LookupGroups(spec.User, spec.UID)
		if err != nil {
			return nil, fmt.Errorf("launch: job %d: %w", spec.JobID, err)
		}
		groups = g
	}
	return &shim.Credential{UID: spec.UID, GID: spec.GID, Groups: groups}, nil
}

// writeScript stores the batch script, owned by and executable for the
// job's user only.
func writeScript(path string, spec Spec) error {
	if err := os.WriteFile(path, []byte(spec.Script), 0o700); err != nil {
		return fmt.Errorf("launch: job %d: write script: %w", spec.JobID, err)
	}
	if err := os.Chmod(path, 0o700); err != nil {
		return fmt.Errorf("launch: job %d: script mode: %w", spec.JobID, err)
	}
	if err := os.Chown(path, int(spec.UID), int(spec.GID)); err != nil {
		return fmt.Errorf("launch: job %d: script owner: %w", spec.JobID, err)
	}
	return nil
}
