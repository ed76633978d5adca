package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/agent/cgroup"
	"github.com/parityhpc/parity/scheduler/agent/ctlfile"
	"github.com/parityhpc/parity/scheduler/agent/shim"
)

// recordVersion is bumped when Record changes incompatibly (2: jobs run
// under the node's supervisor, not a shim each).
const recordVersion = 2

// Record is a job's state file: everything a restarted agent needs to find
// the job again, keep enforcing its limits and report its end. It is
// rewritten atomically on every change.
type Record struct {
	Version int  `json:"version"`
	Spec    Spec `json:"spec"`
	// Node is the node the job was launched for.
	Node string `json:"node"`
	// Isolated is false when the host had no usable cgroups.
	Isolated  bool   `json:"isolated"`
	JobGroup  string `json:"jobGroup,omitempty"`
	StepGroup string `json:"stepGroup,omitempty"`
	// CPUs records how the allocation's CPUs became the cpuset.
	CPUs cgroup.CPUMapping `json:"cpus"`
	// Stdout and Stderr are the resolved output paths.
	Stdout  string    `json:"stdout"`
	Stderr  string    `json:"stderr,omitempty"`
	Started time.Time `json:"started"`
	// Deadline is when the time limit ends the job; zero when unlimited.
	Deadline time.Time `json:"deadline,omitzero"`
	// SuspendedAt is when Suspend stopped the job (zero while it runs);
	// Resume moves Deadline later by the time since.
	SuspendedAt time.Time `json:"suspendedAt,omitzero"`
	// SignalSent is set once --signal has been delivered.
	SignalSent bool `json:"signalSent,omitempty"`
	// Ending is the state the runtime is ending the job with (CANCELLED,
	// TIMEOUT, …) and EndingSince when it sent SIGTERM; empty while the
	// job runs on its own.
	Ending      accounting.JobState `json:"ending,omitempty"`
	EndingSince time.Time           `json:"endingSince,omitzero"`
	// GPUUsage are the per-GPU aggregates so far.
	GPUUsage []GPUUsage `json:"gpuUsage,omitempty"`
	// End is set once the job has ended; the record stays until Forget.
	End *JobEnd `json:"end,omitempty"`
}

// JobEnd is how a job ended.
type JobEnd struct {
	JobID uint64 `json:"jobId"`
	// Run is the run that ended (Spec.Run).
	Run   int32               `json:"run,omitempty"`
	State accounting.JobState `json:"state"`
	// ExitCode and Signal are Slurm's "exit:signal" pair.
	ExitCode   int  `json:"exitCode"`
	Signal     int  `json:"signal"`
	CoreDumped bool `json:"coreDumped,omitempty"`
	// Reason says why, in words ("time limit 1m0s reached", "oom-kill: 1 process").
	Reason string    `json:"reason,omitempty"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Usage  Usage     `json:"usage"`
	// CPUs repeats the cpuset mapping for the job's record.
	CPUs cgroup.CPUMapping `json:"cpus"`
	// Isolated is false when the job ran without cgroups.
	Isolated bool `json:"isolated"`
}

// ExitString renders "exit:signal" as sacct's ExitCode column does.
func (e JobEnd) ExitString() string { return fmt.Sprintf("%d:%d", e.ExitCode, e.Signal) }

// Usage is what accounting records for a job on this node.
type Usage struct {
	CPUTime         time.Duration `json:"cpuTime"`
	MemoryPeakBytes uint64        `json:"memoryPeakBytes"`
	OOMKills        uint64        `json:"oomKills,omitempty"`
	GPUs            []GPUUsage    `json:"gpus,omitempty"`
	// Missing names counters that could not be read.
	Missing []string `json:"missing,omitempty"`
}

// GPUUsage aggregates the driver's samples of one GPU while the job held it.
type GPUUsage struct {
	UUID            string  `json:"uuid"`
	Samples         int     `json:"samples"`
	MeanUtilPct     float64 `json:"meanUtilPct"`
	MaxUtilPct      float64 `json:"maxUtilPct"`
	MaxMemoryBytes  uint64  `json:"maxMemoryBytes"`
	MeanMemoryBytes float64 `json:"meanMemoryBytes"`
}

// writeRecord stores rec: the first version (first set) in one write,
// every later one atomically. A first version cut short by the agent's
// death does not decode, and readers take it for none: the job was never
// started then, as the record is written before the start.
func writeRecord(path string, rec Record, first bool) error {
	rec.Version = recordVersion
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("launch: encode state of job %d: %w", rec.Spec.JobID, err)
	}
	if first {
		return shim.WriteFileOnce(path, append(b, '\n'), 0o600)
	}
	return shim.WriteFileAtomic(path, append(b, '\n'), 0o600)
}

// errTornRecord marks a first record cut short: the launch died before
// it started anything.
var errTornRecord = errors.New("launch: state file is incomplete")

func readRecord(path string) (Record, error) {
	var rec Record
	b, err := ctlfile.ReadValue(path)
	if err != nil {
		return rec, fmt.Errorf("launch: read state %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		var syn *json.SyntaxError
		if len(b) == 0 || errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) {
			return rec, fmt.Errorf("%w: %s: %w", errTornRecord, path, err)
		}
		return rec, fmt.Errorf("launch: decode state %s: %w", path, err)
	}
	if rec.Version != recordVersion {
		return rec, fmt.Errorf("launch: state %s has version %d, want %d", path, rec.Version, recordVersion)
	}
	return rec, nil
}
