package format

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
)

// TimeLayout is how Slurm prints absolute times.
const TimeLayout = "2006-01-02T15:04:05"

// Elapsed renders seconds as squeue's TIME column does: M:SS, H:MM:SS or
// D-HH:MM:SS; negative is INVALID.
func Elapsed(secs int64) string {
	if secs < 0 {
		return "INVALID"
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	switch {
	case d > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

// Limit renders a time limit the squeue way: Elapsed, or UNLIMITED for 0
// or less (Parity's "no limit").
func Limit(secs int64) string {
	if secs <= 0 {
		return "UNLIMITED"
	}
	return Elapsed(secs)
}

// PartitionLimit renders sinfo's TIMELIMIT: Elapsed, or "infinite".
func PartitionLimit(secs int64) string {
	if secs <= 0 {
		return "infinite"
	}
	return Elapsed(secs)
}

// Clock renders seconds as scontrol does: HH:MM:SS or D-HH:MM:SS.
func Clock(secs int64) string {
	if secs < 0 {
		return "INVALID"
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// Stamp renders a wire timestamp in loc as Slurm does, or unset when it
// is missing ("N/A" in squeue, "Unknown" or "None" in scontrol).
func Stamp(ts *timestamppb.Timestamp, loc *time.Location, unset string) string {
	if ts == nil {
		return unset
	}
	return ts.AsTime().In(loc).Format(TimeLayout)
}

// Env is what rendering depends on besides the messages: the time now
// (for elapsed and remaining times) and the zone to print times in.
type Env struct {
	Now time.Time
	Loc *time.Location
	// NodeCPUs is, per partition, the CPUs of its nodes: the counts
	// slurmctld derives for a pending job (squeue's %D) depend on them.
	// A partition missing prints the count asked for.
	NodeCPUs map[string]int
}

func (e Env) loc() *time.Location {
	if e.Loc == nil {
		return time.UTC
	}
	return e.Loc
}

// now is the Env's time, or the clock's when the Env has none.
func (e Env) now() time.Time {
	if e.Now.IsZero() {
		return time.Now()
	}
	return e.Now
}

// CtimeLayout is C's ctime(3) form, which sinfo -l and squeue -l print on
// the line above their header.
const CtimeLayout = "Mon Jan _2 15:04:05 2006"

// dateLine is that line: now in the Env's zone.
func (e Env) dateLine() string { return e.now().In(e.loc()).Format(CtimeLayout) + "\n" }
