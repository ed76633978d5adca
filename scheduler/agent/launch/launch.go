package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/agent/shim"
)

// defaultUmask is what a job's files get unless the spec says otherwise.
const defaultUmask = 0o022

// Launch starts the batch script of spec on this node and returns once
// the supervisor runs it; the job's end arrives on Events. Launching a job this
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
	// The spec is known before the job is published: RunOf may ask
	// which run it is while it starts.
	j := &job{dir: dir, gpus: newGPUAggs(spec.GPUs, nil), rec: Record{Spec: spec}}
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
	err := r.start(ctx, j, spec)
	if err != nil {
		j.mu.Unlock()
		r.mu.Lock()
		delete(r.jobs, id)
		r.mu.Unlock()
		return err
	}
	r.armTimers(j)
	j.mu.Unlock()
	r.log.Info("job launched", "job", id, "user", spec.User, "pid", j.pid, "cpus", j.rec.CPUs.String(), "group", j.rec.JobGroup,
		"devices", len(spec.Prepared.DeviceFiles), "timeLimit", spec.TimeLimit)
	return nil
}

// start prepares the spool and the cgroups and has the supervisor start
// the job; on error it removes what it made. j.mu is held.
func (r *Runtime) start(ctx context.Context, j *job, spec Spec) (err error) {
	id := spec.JobID
	sup, err := r.supervisor()
	if err != nil {
		return err
	}
	if err := mkdirJobDir(j.dir); err != nil {
		return fmt.Errorf("launch: job %d: spool: %w", id, err)
	}
	defer func() {
		if err != nil {
			r.discard(j)
		}
	}()
	cred, err := r.credential(spec)
	if err != nil {
		return err
	}
	script := filepath.Join(j.dir, scriptFile)
	if err := writeScript(script, spec); err != nil {
		return err
	}
	if err := writeFiles(j.dir, &spec); err != nil {
		return err
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
			return err
		}
		procs = j.step.ProcsFiles()
	}
	umask := defaultUmask
	if spec.Umask != nil {
		umask = *spec.Umask
	}
	cfg := shim.Config{JobID: strconv.FormatUint(id, 10), Argv: append([]string{script}, spec.Args...),
		Env: envList(spec.Environment(r.cfg.Node, spec.CPUs.Count())), Dir: spec.WorkDir, Credential: cred,
		Stdin: stdin, Stdout: stdout, Stderr: stderr, Append: spec.Append, Umask: umask,
		ProcsFiles: procs, StatusFile: j.statusPath()}
	// The record comes first: an agent restarted from here on finds the
	// job (and asks the supervisor whether it runs).
	if err := j.create(j.rec.Started); err != nil {
		return err
	}
	// Not cancelled halfway: a start the supervisor made must not be
	// undone here behind its back. A supervisor gone answers at once.
	pid, startErr, err := sup.Start(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return fmt.Errorf("launch: job %d: %w", id, err)
	}
	// A job that could not start ends like one that ran: its status says
	// why and its end follows from the supervisor.
	j.pid, j.sup = pid, sup
	if startErr != "" {
		r.log.Warn("job could not be started", "job", id, "err", startErr)
	}
	return nil
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
	removeJobDir(j.dir)
}

// credential is the identity the job switches to: none when it runs as
// the agent's own user, an error when that would need root.
func (r *Runtime) credential(spec Spec) (*shim.Credential, error) {
	euid := uint32(os.Geteuid())
	if spec.UID == euid && spec.GID == uint32(os.Getegid()) && (spec.Groups == nil || ownGroups(spec.GID, spec.Groups)) {
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

// mkdirJobDir makes a job's spool directory in one system call when the
// spool is there and the directory is not (MkdirAll looks first).
func mkdirJobDir(dir string) error {
	err := unix.Mkdir(dir, 0o711)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EEXIST) {
		return os.MkdirAll(dir, 0o711)
	}
	if err != nil {
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}

// ownGroups reports whether groups, with the job's gid (the agent's own),
// give the access this process has: a job of the agent's own user (root,
// which the user database lists in group 0 while the agent may hold no
// supplementary group at all) then needs no identity change, which costs
// the supervisor a thread of its own for every job.
func ownGroups(gid uint32, groups []uint32) bool {
	own, err := os.Getgroups()
	if err != nil {
		return false
	}
	mine := []uint32{gid}
	for _, g := range own {
		mine = append(mine, uint32(g))
	}
	set := func(gs []uint32) []uint32 { return slices.Compact(slices.Sorted(slices.Values(gs))) }
	return slices.Equal(set(append([]uint32{gid}, groups...)), set(mine))
}

// writeScript stores the batch script, owned by and executable for the
// job's user only.
func writeScript(path string, spec Spec) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o700)
	if err != nil {
		return fmt.Errorf("launch: job %d: write script %s: %w", spec.JobID, path, err)
	}
	defer unix.Close(fd)
	// The mode is set on the handle as well: the agent's umask may have
	// narrowed it. The owner only changes when the job is someone else's.
	if err := unix.Fchmod(fd, 0o700); err != nil {
		return fmt.Errorf("launch: job %d: script mode: %w", spec.JobID, err)
	}
	if spec.UID != uint32(os.Geteuid()) || spec.GID != uint32(os.Getegid()) {
		if err := unix.Fchown(fd, int(spec.UID), int(spec.GID)); err != nil {
			return fmt.Errorf("launch: job %d: script owner: %w", spec.JobID, err)
		}
	}
	for b := []byte(spec.Script); len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("launch: job %d: write script: %w", spec.JobID, err)
		}
		b = b[max(n, 0):]
	}
	return nil
}
