package controller

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
	cstate "github.com/parityhpc/parity/scheduler/state"
	"github.com/parityhpc/parity/scheduler/workflow"
)

// maxSplitPerPass bounds how many tasks of one unthrottled array are
// split off per pass, so a 10,000-task array does not become 10,000
// pending jobs at once; split-off tasks still pending count against it.
const maxSplitPerPass = 256

// arrayTask marks a job as one task of an array.
type arrayTask struct {
	array core.JobID
	index int
}

// arrayHolder reports whether the job is an array's remainder that has
// not become a task yet: it is never scheduled itself.
func (j *job) arrayHolder() bool { return j.array != nil && j.task == nil }

// prepareArray parses --array at submit, its indices below the cluster's
// MaxArraySize; the array's id is set when the job gets its id.
func prepareArray(j *job, maxArraySize int) error {
	s := j.spec.GetArray()
	if s == "" {
		return nil
	}
	a, err := jobspec.ParseArray(s, min(maxArraySize, jobspec.MaxArraySizeCeiling)-1)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "submit: --array=%q: %v", s, err)
	}
	j.array = workflow.NewArrayJob(0, a)
	return nil
}

// arrayFields adds the array identity to a job's wire record.
func (j *job) arrayFields(p *pb.Job) {
	if j.task != nil {
		p.ArrayJobId, p.ArrayTaskId, p.ArrayTask = uint64(j.task.array), int32(j.task.index), true
		p.ArrayName = workflow.TaskName(j.task.array, j.task.index)
	}
	if j.arrayHolder() {
		p.ArrayJobId, p.ArrayName = uint64(j.Core.ID), j.array.PendingName()
		if p.ArrayName == "" {
			p.ArrayName = fmt.Sprintf("%d_[]", j.Core.ID)
		}
	}
}

// arrayState encodes the array's remainder for the durable record. Split
// tasks are their own records, so they are left out (restoreArrays finds
// them again), which keeps the record small for a large array.
func (j *job) arrayState() ([]byte, error) {
	if j.array == nil {
		return nil, nil
	}
	r := j.array.Record()
	r.Tasks = nil
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("controller: encode array %d: %w", j.Core.ID, err)
	}
	return b, nil
}

// arrayFromRecord reads the array fields of a durable record; the array
// itself is rebuilt by restoreArrays once every job is loaded.
func (j *job) arrayFromRecord(p *pb.Job) error {
	if p.GetArrayTask() {
		j.task = &arrayTask{array: core.JobID(p.GetArrayJobId()), index: int(p.GetArrayTaskId())}
	}
	if b := p.GetArrayState(); len(b) > 0 {
		var r workflow.ArrayRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("array_state: %w", err)
		}
		j.arrayRec = &r
	}
	return nil
}

// restoreArrays rebuilds every array from its record and its tasks' records.
func restoreArrays(st *state) error {
	tasks := map[core.JobID][]workflow.Task{}
	for _, j := range st.jobs {
		if j.task != nil {
			tasks[j.task.array] = append(tasks[j.task.array], workflow.Task{Index: j.task.index, JobID: j.Core.ID,
				State: taskState(j), ExitCode: int(j.ExitCode), Start: j.Core.Start})
		}
	}
	for _, j := range st.jobs {
		if j.arrayRec == nil {
			continue
		}
		r := *j.arrayRec
		r.ID, r.Tasks = j.Core.ID, tasks[j.Core.ID]
		a, err := workflow.RestoreArrayJob(r)
		if err != nil {
			return fmt.Errorf("job %d: %w", j.Core.ID, err)
		}
		j.array, j.arrayRec = a, nil
	}
	return nil
}

// taskState is a job's state as the array bookkeeping names it.
func taskState(j *job) workflow.State {
	switch j.State {
	case StateRunning, StateCompleting:
		return workflow.Running
	case StateSuspended:
		return workflow.Suspended
	}
	return workflow.State(j.State)
}

// splitArraysLocked brings each open array's task states up to date and
// splits off the next tasks the %N throttle allows, as jobs of their own
// (c.mu held). It returns the writes that make them durable.
func (c *Controller) splitArraysLocked() ([]write, error) {
	st := c.st
	var ws []write
	// Task states reach their array's bookkeeping (what the throttle
	// and dependencies on the array read) while the tasks are still in
	// the active list: a task that ended since the last pass is still there.
	if err := c.syncArraysLocked(); err != nil {
		return nil, err
	}
	for _, j := range st.m.Active() {
		if !j.arrayHolder() || j.State != StatePending {
			continue
		}
		waiting := 0
		for _, t := range j.array.Tasks() {
			if t.State == workflow.Pending {
				waiting++
			}
		}
		if waiting >= maxSplitPerPass {
			continue
		}
		split := j.array.NextTasks(maxSplitPerPass-waiting, st.m.TakeID)
		if len(split) == 0 {
			if r := j.array.PendingReason(); r != "" {
				j.Reason, j.Detail = string(r), ""
			}
			continue
		}
		tws, err := c.materializeTasksLocked(j, split)
		if err != nil {
			return nil, err
		}
		ws = append(ws, tws...)
	}
	if len(ws) > 0 {
		ws = append(ws, write{bucket: bucketMeta, key: keyNextID, val: u64(uint64(st.m.NextID()))})
	}
	return ws, nil
}

// materializeTasksLocked makes jobs of tasks just split off array j and
// returns the writes of their records and of j's (c.mu held); the caller
// writes the next job id.
func (c *Controller) materializeTasksLocked(j *job, split []workflow.Task) ([]write, error) {
	st := c.st
	var ws []write
	var cold []byte
	for _, t := range split {
		if t.JobID == j.Core.ID {
			// The last task takes the array's own id and record.
			j.task = &arrayTask{array: j.Core.ID, index: t.Index}
			continue
		}
		if cold == nil {
			cold = j.arrayCold
		}
		if cold == nil {
			spec, err := c.store.script(j.Core.ID)
			if err != nil {
				return nil, err
			}
			if cold, err = proto.Marshal(spec); err != nil {
				return nil, fmt.Errorf("controller: array %d script: %w", j.Core.ID, err)
			}
		}
		tj := &job{Job: cstate.Job{Core: j.Core, State: StatePending, Reason: string(core.ReasonNone)}, spec: proto.CloneOf(j.spec),
			task: &arrayTask{array: j.Core.ID, index: t.Index}}
		tj.Core.ID, tj.Core.Alloc = t.JobID, nil
		if err := st.m.AddSplit(tj); err != nil {
			return nil, fmt.Errorf("controller: array %d: %w", j.Core.ID, err)
		}
		val, err := tj.marshal()
		if err != nil {
			return nil, err
		}
		key := jobKey(t.JobID)
		ws = append(ws, write{bucket: bucketJobs, key: key, val: val}, write{bucket: bucketScripts, key: key, val: cold})
	}
	val, err := j.marshal()
	if err != nil {
		return nil, err
	}
	return append(ws, write{bucket: bucketJobs, key: jobKey(j.Core.ID), val: val}), nil
}

// parseTaskSelection reads a cancel request's task list ("7", "[1-3,7]").
func parseTaskSelection(jid uint64, s string) (*jobspec.Array, error) {
	if s == "" {
		return nil, nil
	}
	body := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	sel, err := jobspec.ParseArray(body, jobspec.MaxArraySizeCeiling-1)
	if err != nil || strings.Contains(body, "%") {
		return nil, status.Errorf(codes.InvalidArgument, "cancel: job %d tasks %q: not a task list (%v)", jid, s, err)
	}
	return sel, nil
}

// syncArraysLocked copies every live task's job state into its array's
// bookkeeping.
func (c *Controller) syncArraysLocked() error {
	for _, tj := range c.st.m.Active() {
		if tj.task == nil {
			continue
		}
		h := c.st.jobs[tj.task.array]
		if h == nil || h.array == nil {
			continue
		}
		t, ok := h.array.Task(tj.task.index)
		if !ok || t.JobID != tj.Core.ID {
			continue
		}
		if s := taskState(tj); s != t.State {
			if err := h.array.SetState(t.Index, s, int(tj.ExitCode), tj.Core.Start); err != nil {
				return err
			}
		}
	}
	return nil
}
