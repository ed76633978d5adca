package workflow

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// Array errors.
var (
	ErrNoSuchTask = errors.New("workflow: no such array task")
	ErrThrottle   = errors.New("workflow: invalid ArrayTaskThrottle")
)

// Task is one array task that was split off the pending remainder to run
// as a job of its own.
type Task struct {
	Index int
	// JobID is the task's own job id; the last task split off takes the
	// array's id, as in Slurm.
	JobID    core.JobID
	State    State
	ExitCode int
	Start    time.Time
}

// ArrayJob is one array submission: the compact remainder of tasks not
// yet split off (ranges, not tasks, so a 10,000-task array costs a few
// words until its tasks run), the tasks split off with their states, and
// the %N throttle. It is a value owned by one goroutine.
type ArrayJob struct {
	ID       core.JobID
	throttle int
	pending  rangeSet // not split off yet
	dropped  rangeSet // cancelled before they were split off
	tasks    []Task   // split off, by index
	size     int
	min, max int
	step     int
}

// NewArrayJob starts an array from its parsed --array value.
func NewArrayJob(id core.JobID, a *jobspec.Array) *ArrayJob {
	return &ArrayJob{ID: id, throttle: a.Limit, pending: newRangeSet(a.Ranges()), size: a.Len(), min: a.Min(), max: a.Max(), step: a.Step()}
}

// Size is the number of tasks the array was submitted with.
func (a *ArrayJob) Size() int { return a.size }

// Throttle is the %N limit on tasks running at once (0 = none).
func (a *ArrayJob) Throttle() int { return a.throttle }

// SetThrottle changes the %N limit (scontrol update ArrayTaskThrottle=N;
// 0 lifts it). Tasks already running are not stopped.
func (a *ArrayJob) SetThrottle(n int) error {
	if n < 0 {
		return fmt.Errorf("%w: ArrayTaskThrottle=%d must not be negative", ErrThrottle, n)
	}
	a.throttle = n
	return nil
}

// PendingCount is how many tasks have not been split off yet.
func (a *ArrayJob) PendingCount() int { return a.pending.len() }

// PendingRanges is the remainder's size in ranges (what it costs in memory).
func (a *ArrayJob) PendingRanges() int { return len(a.pending.r) }

// active counts split-off tasks that are pending, running or suspended:
// what the throttle counts.
func (a *ArrayJob) active() int {
	n := 0
	for _, t := range a.tasks {
		if t.State.Active() {
			n++
		}
	}
	return n
}

// NextTasks splits off the next tasks to schedule, lowest index first:
// at most limit (limit <= 0: no limit of the caller's), and never so many
// that split-off active tasks exceed the %N throttle, so the scheduler
// can never run more than N at once. New tasks are pending; nextID gives
// each its job id, except the very last task, which takes the array's id.
func (a *ArrayJob) NextTasks(limit int, nextID func() core.JobID) []Task {
	room := a.pending.len()
	if limit > 0 {
		room = min(room, limit)
	}
	if a.throttle > 0 {
		room = min(room, a.throttle-a.active())
	}
	var out []Task
	for ; room > 0; room-- {
		i, ok := a.pending.popFront()
		if !ok {
			break
		}
		id := a.ID
		if a.pending.len() > 0 {
			id = nextID()
		}
		t := Task{Index: i, JobID: id, State: Pending}
		a.insert(t)
		out = append(out, t)
	}
	return out
}

func (a *ArrayJob) insert(t Task) {
	k := sort.Search(len(a.tasks), func(k int) bool { return a.tasks[k].Index >= t.Index })
	if k < len(a.tasks) && a.tasks[k].Index == t.Index {
		a.tasks[k] = t
		return
	}
	a.tasks = append(a.tasks, Task{})
	copy(a.tasks[k+1:], a.tasks[k:])
	a.tasks[k] = t
}

func (a *ArrayJob) split(index int) *Task {
	k := sort.Search(len(a.tasks), func(k int) bool { return a.tasks[k].Index >= index })
	if k < len(a.tasks) && a.tasks[k].Index == index {
		return &a.tasks[k]
	}
	return nil
}

// SplitOff returns a task split off the remainder (false while it is still
// in the remainder, was cancelled there, or does not exist).
func (a *ArrayJob) SplitOff(index int) (Task, bool) {
	if t := a.split(index); t != nil {
		return *t, true
	}
	return Task{}, false
}

// SplitTask splits one task off the remainder out of turn, as Slurm does
// when a pending task is modified by its id (scontrol hold 123_7): it
// becomes a pending task with a job id from nextID, or the array's own id
// when it was the last one left. It then counts against the %N throttle
// as every split-off pending task does.
func (a *ArrayJob) SplitTask(index int, nextID func() core.JobID) (Task, error) {
	if !a.pending.remove(index) {
		return Task{}, fmt.Errorf("%w: %s is not waiting in the array", ErrNoSuchTask, TaskName(a.ID, index))
	}
	id := a.ID
	if a.pending.len() > 0 {
		id = nextID()
	}
	t := Task{Index: index, JobID: id, State: Pending}
	a.insert(t)
	return t, nil
}

// Task returns a task's state: a split-off task as recorded, a task
// still in the remainder as pending (with the array's id), a task
// cancelled in the remainder as cancelled.
func (a *ArrayJob) Task(index int) (Task, bool) {
	if t := a.split(index); t != nil {
		return *t, true
	}
	if a.pending.contains(index) {
		return Task{Index: index, JobID: a.ID, State: Pending}, true
	}
	if a.dropped.contains(index) {
		return Task{Index: index, JobID: a.ID, State: Cancelled}, true
	}
	return Task{}, false
}

// Tasks returns the split-off tasks by index (a copy).
func (a *ArrayJob) Tasks() []Task { return append([]Task(nil), a.tasks...) }

// SetState records what happened to a split-off task: it started
// (Running, with its start time), ended (a finished state and its exit
// code) or was requeued (Pending: it goes back to the remainder).
func (a *ArrayJob) SetState(index int, st State, exitCode int, at time.Time) error {
	t := a.split(index)
	if t == nil {
		return fmt.Errorf("%w: %s", ErrNoSuchTask, TaskName(a.ID, index))
	}
	if !st.Valid() {
		return fmt.Errorf("workflow: task %s: unknown state %q", TaskName(a.ID, index), st)
	}
	t.State, t.ExitCode = st, exitCode
	if st == Running && t.Start.IsZero() {
		t.Start = at
	}
	return nil
}

// Cancel cancels the selected tasks (nil: the whole array): those still
// in the remainder and those split off but pending end at once
// (CANCELLED); running and suspended ones are returned for the caller to
// signal (it records their end with SetState). n counts every task hit.
func (a *ArrayJob) Cancel(sel *jobspec.Array) (signal []Task, n int) {
	in := func(i int) bool { return sel == nil || sel.Contains(i) }
	var keep []int
	a.pending.each(func(i int) bool {
		if in(i) {
			keep = append(keep, i)
		}
		return true
	})
	if sel == nil && a.dropped.len() == 0 {
		a.dropped, a.pending = a.pending, rangeSet{}
		n += a.dropped.len()
	} else {
		for _, i := range keep {
			a.pending.remove(i)
			a.dropped.add(i)
			n++
		}
	}
	for k := range a.tasks {
		t := &a.tasks[k]
		if !in(t.Index) || t.State.Finished() {
			continue
		}
		n++
		if t.State == Running || t.State == Suspended {
			signal = append(signal, *t)
			continue
		}
		t.State = Cancelled
	}
	return signal, n
}

// Requeue puts a split-off task back: it is pending again (it keeps its
// job id; its restart count is the caller's).
func (a *ArrayJob) Requeue(index int) error {
	t := a.split(index)
	if t == nil {
		return fmt.Errorf("%w: %s", ErrNoSuchTask, TaskName(a.ID, index))
	}
	t.State, t.ExitCode, t.Start = Pending, 0, time.Time{}
	return nil
}

// Counts summarises the array: tasks not started (remainder and
// split-off pending), running or suspended, succeeded, and ended
// otherwise (failed, cancelled, timed out…).
func (a *ArrayJob) Counts() (pending, running, succeeded, failed int) {
	pending = a.pending.len()
	failed = a.dropped.len()
	for _, t := range a.tasks {
		switch {
		case t.State == Pending || t.State == RequeueHold:
			pending++
		case t.State == Running || t.State == Suspended:
			running++
		case t.State.Succeeded():
			succeeded++
		case t.State.Finished():
			failed++
		}
	}
	return
}

// AllStarted reports whether every task has started (or ended without
// starting, like a cancelled one): what after:<array> waits for.
func (a *ArrayJob) AllStarted() bool {
	if a.pending.len() > 0 {
		return false
	}
	for _, t := range a.tasks {
		if t.State == Pending || t.State == RequeueHold {
			return false
		}
	}
	return true
}

// AllEnded reports whether every task has ended.
func (a *ArrayJob) AllEnded() bool {
	p, r, _, _ := a.Counts()
	return p == 0 && r == 0
}

// AnyFailed reports whether a task has ended other than COMPLETED.
func (a *ArrayJob) AnyFailed() bool {
	_, _, _, f := a.Counts()
	return f > 0
}

// PendingReason is the reason squeue shows for the remainder when the
// throttle holds it back (JobArrayTaskLimit), else "".
func (a *ArrayJob) PendingReason() core.Reason {
	if a.pending.len() > 0 && a.throttle > 0 && a.active() >= a.throttle {
		return core.ReasonJobArrayTaskLimit
	}
	return ""
}

// PendingName is the remainder as squeue prints it: 123_[8-9999%50]
// (123_8 for a lone task without a throttle, "" when nothing is left).
func (a *ArrayJob) PendingName() string {
	if a.pending.len() == 0 {
		return ""
	}
	body := a.pending.String()
	if a.throttle > 0 {
		body += "%" + strconv.Itoa(a.throttle)
	} else if a.pending.len() == 1 {
		return strconv.FormatUint(uint64(a.ID), 10) + "_" + body
	}
	return strconv.FormatUint(uint64(a.ID), 10) + "_[" + body + "]"
}

// Line is one squeue row of an array.
type Line struct {
	ID     string // 123_7 or 123_[8-9999%50]
	JobID  core.JobID
	State  State
	Reason core.Reason
}

// Lines are the array's squeue rows: the pending remainder first, then
// every split-off task that has not ended, by index.
func (a *ArrayJob) Lines() []Line {
	var out []Line
	if name := a.PendingName(); name != "" {
		out = append(out, Line{ID: name, JobID: a.ID, State: Pending, Reason: a.PendingReason()})
	}
	for _, t := range a.tasks {
		if !t.State.Finished() {
			out = append(out, Line{ID: TaskName(a.ID, t.Index), JobID: t.JobID, State: t.State})
		}
	}
	return out
}

// Vars are the output-pattern values of one task (%A, %a, %j).
func (a *ArrayJob) Vars(t Task) jobspec.Vars {
	return jobspec.Vars{JobID: uint64(t.JobID), ArrayJobID: uint64(a.ID), ArrayTaskID: uint32(t.Index), InArray: true}
}
