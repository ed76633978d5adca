package config

import (
	"math"
	"time"
)

// JobLimits bound what the controller accepts, with slurm.conf's names and
// defaults. The controller enforces them where the state changes (submit,
// update); clients check syntax only, so every refusal is worded once, by
// the controller, whichever path the request took.
type JobLimits struct {
	// MaxArraySize: array task indices run from 0 to MaxArraySize-1
	// (slurm.conf MaxArraySize; default 1001, at most 4000001).
	MaxArraySize int
	// MaxJobCount: the most job records the controller holds (slurm.conf
	// MaxJobCount, default 10000): pending and running jobs and finished
	// ones until MinJobAge purges them; a pending array counts once, a
	// task split off it on its own.
	MaxJobCount int
	// MaxScriptSize: the bytes of a batch script (Slurm's
	// SchedulerParameters=max_script_size, default 4 MiB).
	MaxScriptSize int
	// MaxNameLength: the bytes of a name-like field of a job: its name,
	// comment, account, partition, QOS, reservation, constraint, mail
	// user, GRES options (Slurm's 1024).
	MaxNameLength int
}

// Defaults and ceilings of JobLimits.
const (
	DefaultMaxArraySize  = 1001
	MaxArraySizeCeiling  = 4000001
	DefaultMaxJobCount   = 10000
	DefaultMaxScriptSize = 4 << 20
	MaxScriptSizeCeiling = 64 << 20
	DefaultMaxNameLength = 1024
)

// Fixed bounds on every quantity a job may ask, checked at submit (and
// update) so that no product the scheduler forms from them (memory per
// CPU × CPUs per node, tasks × CPUs per task, GPUs per task × tasks per
// node, seconds × time.Second) can overflow. Each is at most what the
// command line's syntax admits, so the controller's message is the one
// a user sees.
const (
	// MaxNodeCount bounds --nodes and the maximum node count.
	MaxNodeCount = 1 << 24
	// MaxCount bounds --ntasks, --ntasks-per-node, --cpus-per-task,
	// --cpus-per-gpu, --switches and the CPUs per node they make.
	MaxCount = 1 << 24
	// MaxGPUCount bounds one GRES term's count and the GPUs per node or
	// per job a request makes.
	MaxGPUCount = 1 << 20
	// MaxMemoryMB (1 EiB) bounds --mem, --mem-per-cpu, --mem-per-gpu and
	// the memory per node they make.
	MaxMemoryMB = 1 << 40
	// MaxSeconds bounds --time, --time-min and the switch wait: what
	// time.Duration holds (about 292 years).
	MaxSeconds = math.MaxInt64 / int64(time.Second)
	// MaxPathLength bounds --chdir, --output, --error, --input and the
	// script's file name (PATH_MAX, Slurm's MAXPATHLEN).
	MaxPathLength = 4096
	// MaxExpressionLength bounds --dependency and --array (Slurm allows
	// 128 KiB of dependency text).
	MaxExpressionLength = 128 << 10
)

// jobLimits checks the file's limits and applies slurm.conf's defaults.
func (p *parser) jobLimits(r *rawCluster) JobLimits {
	l := JobLimits{MaxArraySize: DefaultMaxArraySize, MaxJobCount: DefaultMaxJobCount,
		MaxScriptSize: DefaultMaxScriptSize, MaxNameLength: DefaultMaxNameLength}
	for _, f := range []struct {
		path     string
		v        *int
		into     *int
		min, max int
	}{
		{"maxArraySize", r.MaxArraySize, &l.MaxArraySize, 1, MaxArraySizeCeiling},
		{"maxJobCount", r.MaxJobCount, &l.MaxJobCount, 1, math.MaxInt32},
		{"maxScriptSize", r.MaxScriptSize, &l.MaxScriptSize, 1, MaxScriptSizeCeiling},
		{"maxNameLength", r.MaxNameLength, &l.MaxNameLength, 1, MaxPathLength},
	} {
		switch {
		case f.v == nil:
		case *f.v < f.min || *f.v > f.max:
			p.errorf(f.path, "%d must be within %d..%d", *f.v, f.min, f.max)
		default:
			*f.into = *f.v
		}
	}
	return l
}
