package state

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

// Dump writes the machine's durable state as text, one line per job in id
// order: the same state gives the same bytes, so replays and snapshots
// compare with ==, and scripted scenarios read it as their expected state.
func (m *Machine[R]) Dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "next-id %d\n", m.nextID)
	ids := make([]core.JobID, 0, len(m.jobs))
	for id := range m.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		writeJob(&b, m.jobs[id].Lifecycle())
	}
	m.dumpNodes(&b)
	m.usage.dump(&b)
	return b.String()
}

// dump writes the ledger: when it was charged, then each association's
// usage and rate in key order (nothing without a ledger). Values are
// written exactly, so equal dumps mean equal usage.
func (u *Usage) dump(b *strings.Builder) {
	if u == nil {
		return
	}
	fmt.Fprintf(b, "usage charged=%s\n", stamp(u.charged))
	order := make([]int, len(u.keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return strings.Compare(u.keys[x], u.keys[y]) })
	for _, i := range order {
		fmt.Fprintf(b, "usage %s=%s rate=%s\n", u.keys[i], strconv.FormatFloat(u.use[i], 'g', -1, 64), strconv.FormatFloat(u.rate[i], 'g', -1, 64))
	}
}

func writeJob(b *strings.Builder, j *Job) {
	fmt.Fprintf(b, "job %d %s user=%s", j.Core.ID, j.State, j.Core.User)
	opt := func(k, v string) {
		if v != "" {
			fmt.Fprintf(b, " %s=%s", k, v)
		}
	}
	opt("name", j.Core.Name)
	opt("partition", j.Core.Partition)
	opt("partitions", strings.Join(j.Core.Partitions, ","))
	opt("qos", j.Core.QOS)
	opt("account", j.Core.Account)
	if j.Core.Nice != 0 {
		fmt.Fprintf(b, " nice=%d", j.Core.Nice)
	}
	opt("hold", string(j.Core.Hold))
	if j.State != Pending {
		// A pending job's reason is the last pass's verdict, computed
		// again by every pass and not part of the durable state.
		opt("reason", j.Reason)
		opt("detail", j.Detail)
	}
	if j.Restarts > 0 {
		fmt.Fprintf(b, " restarts=%d", j.Restarts)
	}
	if j.Charge != 0 {
		b.WriteString(" charge=" + strconv.FormatFloat(j.Charge, 'g', -1, 64))
	}
	opt("cancelled-by", j.CancelledBy)
	if j.RequeueOnEnd {
		b.WriteString(" requeue-on-end")
	}
	if j.HoldOnEnd {
		b.WriteString(" hold-on-end")
	}
	if j.ExpediteOnEnd {
		b.WriteString(" expedite-on-end")
	}
	if j.Core.Expedite {
		b.WriteString(" expedite")
	}
	opt("avoid", FormatAvoid(j.Core.Avoid))
	opt("fault", j.FaultReason)
	opt("fault-state", j.FaultState)
	opt("last-requeue", j.LastRequeueReason)
	opt("limit", dur(j.Core.TimeLimit))
	opt("begin", stamp(j.Core.Begin))
	opt("eligible", stamp(j.Core.Eligible))
	opt("start", stamp(j.Core.Start))
	opt("end", stamp(j.End))
	opt("suspended-at", stamp(j.SuspendedAt))
	opt("suspended-for", dur(j.SuspendedFor))
	if !j.Core.PreemptEnd.IsZero() {
		fmt.Fprintf(b, " preempted-by=%d mode=%s grace-end=%s", j.PreemptedBy, j.PreemptMode, stamp(j.Core.PreemptEnd))
	}
	if j.ExitCode != 0 || j.ExitSignal != 0 {
		fmt.Fprintf(b, " exit=%d:%d", j.ExitCode, j.ExitSignal)
	}
	if len(j.Core.Alloc) > 0 {
		b.WriteString(" alloc=" + FormatAlloc(j.Core.Alloc))
	}
	b.WriteByte('\n')
}

// FormatAlloc writes allocations as node:cpus:dev+dev, slash-separated
// (a CPU list has commas of its own).
func FormatAlloc(as []core.NodeAlloc) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.Node + ":" + a.CPUs.String() + ":" + strings.Join(a.Devices, "+")
	}
	return strings.Join(parts, "/")
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func dur(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// String writes an effect as one line, for logs and scripted scenarios.
func String(e Effect) string {
	switch e := e.(type) {
	case Logged:
		s := fmt.Sprintf("log %s job=%d user=%s state=%s actor=%s", e.Kind, e.Job, e.User, e.State, e.Actor)
		if e.Partition != "" {
			s += " partition=" + e.Partition
		}
		if e.Reason != "" {
			s += fmt.Sprintf(" reason=%q", e.Reason)
		}
		if len(e.Nodes) > 0 {
			s += " nodes=" + strings.Join(e.Nodes, ",")
		}
		for _, k := range slices.Sorted(maps.Keys(e.Fields)) {
			s += fmt.Sprintf(" %s=%q", k, e.Fields[k])
		}
		return s
	case Accepted:
		return fmt.Sprintf("accepted job=%d", e.Job)
	case Launch:
		return fmt.Sprintf("launch job=%d run=%d", e.Job, e.Run)
	case Kill:
		s := fmt.Sprintf("kill job=%d run=%d nodes=%s reason=%q", e.Job, e.Run, strings.Join(e.Nodes, ","), e.Reason)
		if e.DropLaunch {
			s += " drop-launch"
		}
		return s
	case Signal:
		return fmt.Sprintf("signal job=%d run=%d nodes=%s signal=%d reason=%q", e.Job, e.Run, strings.Join(e.Nodes, ","), e.Signal, e.Reason)
	case Pause:
		verb := "suspend"
		if e.Resume {
			verb = "resume"
		}
		return fmt.Sprintf("%s job=%d run=%d nodes=%s reason=%q", verb, e.Job, e.Run, strings.Join(e.Nodes, ","), e.Reason)
	case Account:
		return fmt.Sprintf("account job=%d run=%d state=%s requeued=%t", e.Job, e.Run, e.State, e.Requeued)
	case Finished:
		return fmt.Sprintf("finished job=%d state=%s", e.Job, e.State)
	case Requeued:
		return fmt.Sprintf("requeued job=%d run=%d", e.Job, e.Run)
	case NodeLogged:
		s := fmt.Sprintf("log %s node=%s actor=%s", e.Kind, e.Node, e.Actor)
		if e.Reason != "" {
			s += fmt.Sprintf(" reason=%q", e.Reason)
		}
		if len(e.Devices) > 0 {
			s += " devices=" + strings.Join(e.Devices, ",")
		}
		return s
	}
	return fmt.Sprintf("%T", e)
}
