package compat

import (
	"strconv"
	"strings"
)

// envByNature are variables that differ between any two clusters or runs:
// process ids, ports and addresses of the launching srun, configuration
// paths, the submit host, times.
var envByNature = []string{"SLURM_TASK_PID", "SLURM_CONF", "SLURM_SUBMIT_HOST", "SLURM_WORKING_CLUSTER", "SLURM_SRUN_COMM_PORT",
	"SLURM_SRUN_COMM_HOST", "SLURM_STEP_LAUNCHER_PORT", "SLURM_LAUNCH_NODE_IPADDR", "SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME",
	"SLURM_PRIO_PROCESS", "SLURM_UMASK"}

// envFields are an env answer's comparable fields: "batch VAR" for the
// batch step and "step VAR" for the step's tasks (their values in task
// order, '|' between, "-" where a task lacks it), the job id and the
// case's directory replaced.
func envFields(a *EnvAnswer) map[string]string {
	out := map[string]string{"step exit": map[bool]string{false: "0", true: "failed"}[a.StepFailed],
		"step tasks": strconv.Itoa(len(a.Tasks))}
	value := func(k, v string) string {
		if a.Dir != "" {
			v = strings.ReplaceAll(v, a.Dir, "$CWD")
		}
		if k == "SLURM_JOB_ID" || k == "SLURM_JOBID" {
			v = replaceID(v, a.JobID, "$ID")
		}
		return v
	}
	for k, v := range a.Batch {
		if !isByNature(k) {
			out["batch "+k] = value(k, v)
		}
	}
	keys := map[string]bool{}
	for _, t := range a.Tasks {
		for k := range t {
			if !isByNature(k) {
				keys[k] = true
			}
		}
	}
	for k := range keys {
		vals := make([]string, len(a.Tasks))
		for i, t := range a.Tasks {
			v, ok := t[k]
			vals[i] = "-"
			if ok {
				vals[i] = value(k, v)
			}
		}
		out["step "+k] = strings.Join(vals, "|")
	}
	return out
}

func isByNature(k string) bool {
	for _, n := range envByNature {
		if k == n {
			return true
		}
	}
	return false
}

// AddEnv compares one env case's answers: accept/reject, then each
// variable of the batch step and of each task.
func (t *Table) AddEnv(id string, slurm, parity *EnvAnswer) {
	t.Cases++
	if slurm.Accepted != parity.Accepted {
		t.Mismatches = append(t.Mismatches, Mismatch{id, acceptField, envVerdict(slurm), envVerdict(parity)})
		return
	}
	t.Agree++
	if slurm.Accepted {
		t.fields(id, envFields(slurm), envFields(parity))
	}
}

func envVerdict(a *EnvAnswer) string {
	if a.Accepted {
		return "accepted"
	}
	return "refused: " + a.Error
}
