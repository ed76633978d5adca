package workflow

import (
	"time"

	"github.com/parityhpc/parity/scheduler/jobspec"
)

// Signal numbers the plans use (Linux).
const (
	SIGKILL = 9
	SIGTERM = 15
	SIGCONT = 18
)

// Action is one signal to send at a moment.
type Action struct {
	At     time.Time
	Signal int
}

// TimeLimitPlan is what enforcing a time limit sends: the job's --signal
// Lead seconds before the limit (not before it starts), SIGTERM at the
// limit (+OverTimeLimit) and SIGKILL KillWait later (Slurm's default
// KillWait is 30 s). A job without a limit gets nothing.
func TimeLimitPlan(start time.Time, limit time.Duration, sig *jobspec.Signal, overTime, killWait time.Duration) []Action {
	if limit <= 0 {
		return nil
	}
	end := start.Add(limit + overTime)
	var out []Action
	if sig != nil && sig.Number > 0 {
		at := end.Add(-sig.Lead)
		if at.Before(start) {
			at = start
		}
		out = append(out, Action{At: at, Signal: sig.Number})
	}
	return append(out, Action{At: end, Signal: SIGTERM}, Action{At: end.Add(killWait), Signal: SIGKILL})
}

// PreemptPlan is what preempting a job sends: SIGCONT and SIGTERM at
// once, then SIGKILL when the grace time ends.
func PreemptPlan(now time.Time, grace time.Duration) []Action {
	return []Action{{At: now, Signal: SIGCONT}, {At: now, Signal: SIGTERM}, {At: now.Add(grace), Signal: SIGKILL}}
}

// DeadlineExpired reports whether a pending job can no longer end by its
// --deadline: starting now, its time limit (or --time-min, when smaller
// and set) would carry it past. Such a job ends in state DEADLINE.
func DeadlineExpired(deadline time.Time, limit, timeMin time.Duration, now time.Time) bool {
	if deadline.IsZero() {
		return false
	}
	need := limit
	if timeMin > 0 && (need <= 0 || timeMin < need) {
		need = timeMin
	}
	if need <= 0 {
		return !now.Before(deadline)
	}
	return now.Add(need).After(deadline)
}
