package launch

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

// BatchStep is the step name of the batch script.
const BatchStep = "batch"

// Spec is one launch order: a batch job on the first of its nodes. Steps
// (srun, --pty) will reuse the same shape with Step set and a Cmd instead
// of a Script, each in its own cgroup under the job's.
type Spec struct {
	JobID uint64 `json:"jobId"`
	// Run is the run of the job the controller launched (its restart
	// count); the job's end and running reports carry it, so the
	// controller tells a run it already requeued from the job's next one.
	Run int32 `json:"run,omitempty"`
	// ArrayJobID and ArrayTaskID identify an array task (InArray).
	ArrayJobID  uint64 `json:"arrayJobId,omitempty"`
	ArrayTaskID uint32 `json:"arrayTaskId,omitempty"`
	InArray     bool   `json:"inArray,omitempty"`
	Name        string `json:"name"`

	// User is the submitting user's name; UID/GID/Groups their identity
	// on this node. Groups nil means "look them up" when switching user.
	User   string   `json:"user"`
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`

	// Script is the batch script; it runs through its #! line with Args.
	Script string   `json:"script"`
	Args   []string `json:"args,omitempty"`
	// WorkDir is the absolute working directory.
	WorkDir string `json:"workDir"`
	// Env is the job's environment as the controller built it (submit
	// environment plus SLURM_* variables); the runtime adds the node-local
	// SLURM_* variables missing from it and the vendor variables on top.
	Env map[string]string `json:"env,omitempty"`
	// Output, Error and Input are unexpanded -o/-e/-i patterns; Output ""
	// is Slurm's slurm-%j.out (slurm-%A_%a.out for arrays), Error "" shares
	// the output file, Input "" is /dev/null.
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	Input  string `json:"input,omitempty"`
	// Append is --open-mode=append.
	Append bool `json:"append,omitempty"`
	// Umask applies to files the job creates; nil means 022.
	Umask *int `json:"umask,omitempty"`

	// Nodes are the allocated nodes in order; the batch step runs on
	// Nodes[0], which must be this node.
	Nodes []string `json:"nodes,omitempty"`
	// CPUs are the allocated CPU ids (virtual on a simulated node).
	CPUs topology.CPUSet `json:"cpus"`
	// MemoryBytes is the job's memory limit on this node; 0 is none.
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
	// Prepared is what the vendor drivers' Prepare returned for the
	// job's devices: the visible-device variables and the device files
	// the job may open. Merge several drivers with AddPrepared.
	Prepared vendors.Prepared `json:"prepared"`
	// GPUs are the UUIDs of the allocated devices, for usage attribution.
	GPUs []string `json:"gpus,omitempty"`

	// TimeLimit ends the job as TIMEOUT; 0 is unlimited.
	TimeLimit time.Duration `json:"timeLimit,omitempty"`
	// Signal is --signal: sent Lead before the time limit.
	Signal *jobspec.Signal `json:"signal,omitempty"`
}

// AddPrepared merges what one more driver prepared into the spec.
func (s *Spec) AddPrepared(p vendors.Prepared) {
	if s.Prepared.Env == nil {
		s.Prepared.Env = map[string]string{}
	}
	maps.Copy(s.Prepared.Env, p.Env)
	s.Prepared.DeviceFiles = append(s.Prepared.DeviceFiles, p.DeviceFiles...)
	s.Prepared.Mounts = append(s.Prepared.Mounts, p.Mounts...)
	s.Prepared.Files = append(s.Prepared.Files, p.Files...)
}

// Validate checks what the runtime cannot work without, naming the field.
func (s Spec) Validate(node string) error {
	switch {
	case s.JobID == 0:
		return fmt.Errorf("launch: jobId 0 is not a job id")
	case s.Script == "":
		return fmt.Errorf("launch: job %d: script is empty", s.JobID)
	case !filepath.IsAbs(s.WorkDir):
		return fmt.Errorf("launch: job %d: workDir %q is not an absolute path", s.JobID, s.WorkDir)
	case s.MemoryBytes < 0:
		return fmt.Errorf("launch: job %d: memoryBytes %d is negative", s.JobID, s.MemoryBytes)
	case s.TimeLimit < 0:
		return fmt.Errorf("launch: job %d: timeLimit %s is negative", s.JobID, s.TimeLimit)
	case len(s.Nodes) > 0 && node != "" && s.Nodes[0] != node:
		return fmt.Errorf("launch: job %d: the batch step runs on the first node %q, not on %q", s.JobID, s.Nodes[0], node)
	case s.Umask != nil && (*s.Umask < 0 || *s.Umask > 0o777):
		return fmt.Errorf("launch: job %d: umask %o is out of range", s.JobID, *s.Umask)
	}
	for _, f := range s.Prepared.DeviceFiles {
		if !filepath.IsAbs(f.Path) {
			return fmt.Errorf("launch: job %d: device file %s has a relative path", s.JobID, f)
		}
	}
	if s.Signal != nil && (s.Signal.Number < 1 || s.Signal.Number > 64) {
		return fmt.Errorf("launch: job %d: signal number %d is out of range 1-64", s.JobID, s.Signal.Number)
	}
	return nil
}

// patternVars are the values -o/-e/-i patterns may use on this node.
func (s Spec) patternVars(node string) jobspec.Vars {
	return jobspec.Vars{JobID: s.JobID, ArrayJobID: s.ArrayJobID, ArrayTaskID: s.ArrayTaskID, InArray: s.InArray,
		JobName: s.Name, User: s.User, NodeName: node}
}

// OutputPaths resolves the -o/-e/-i patterns to absolute paths on node:
// defaults as sbatch, tokens expanded, relative paths under WorkDir. err
// is "" when stderr shares stdout's file, in "" when stdin is /dev/null.
func (s Spec) OutputPaths(node string) (out, errPath, in string) {
	v := s.patternVars(node)
	resolve := func(p string) string {
		if p == "" {
			return ""
		}
		p = jobspec.Expand(p, v)
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.WorkDir, p)
		}
		return p
	}
	pat := s.Output
	if pat == "" {
		pat = "slurm-%j.out"
		if s.InArray {
			pat = "slurm-%A_%a.out"
		}
	}
	out = resolve(pat)
	errPath = resolve(s.Error)
	if errPath == out {
		errPath = ""
	}
	return out, errPath, resolve(s.Input)
}

// Environment is the job's environment on node: the controller's
// variables, then the node-local SLURM_* ones it left out, then the vendor
// variables, which win as in Slurm.
func (s Spec) Environment(node string, cpus int) map[string]string {
	env := maps.Clone(s.Env)
	if env == nil {
		env = map[string]string{}
	}
	setDefault := func(k, v string) {
		if _, ok := env[k]; !ok && v != "" {
			env[k] = v
		}
	}
	id := strconv.FormatUint(s.JobID, 10)
	setDefault("SLURM_JOB_ID", id)
	setDefault("SLURM_JOBID", id)
	setDefault("SLURM_JOB_NAME", s.Name)
	setDefault("SLURM_JOB_USER", s.User)
	setDefault("SLURM_JOB_UID", strconv.FormatUint(uint64(s.UID), 10))
	setDefault("SLURM_JOB_GID", strconv.FormatUint(uint64(s.GID), 10))
	setDefault("SLURMD_NODENAME", node)
	setDefault("SLURM_SUBMIT_DIR", s.WorkDir)
	if cpus > 0 {
		setDefault("SLURM_CPUS_ON_NODE", strconv.Itoa(cpus))
	}
	if len(s.Nodes) > 0 {
		list := jobspec.CompressHostlist(s.Nodes)
		setDefault("SLURM_JOB_NODELIST", list)
		setDefault("SLURM_NODELIST", list)
		setDefault("SLURM_JOB_NUM_NODES", strconv.Itoa(len(s.Nodes)))
		setDefault("SLURM_NNODES", strconv.Itoa(len(s.Nodes)))
	}
	for _, k := range []string{"SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID"} {
		setDefault(k, "0")
	}
	if s.InArray {
		setDefault("SLURM_ARRAY_JOB_ID", strconv.FormatUint(s.ArrayJobID, 10))
		setDefault("SLURM_ARRAY_TASK_ID", strconv.FormatUint(uint64(s.ArrayTaskID), 10))
	}
	maps.Copy(env, s.Prepared.Env)
	return env
}

// envList renders an environment as sorted KEY=VALUE entries.
func envList(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		if k != "" && !strings.ContainsAny(k, "=\x00") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + env[k]
	}
	return out
}
