package jobhistory

import (
	"fmt"
	"strconv"

	"github.com/anishathalye/porcupine"
)

// Kind is what an operation does to the job table.
type Kind uint8

// The operations a history records.
const (
	Submit Kind = iota + 1 // queue a new job named Input.Name; answers its id
	Cancel                 // cancel Input.Job
	Update                 // rename Input.Job to Input.Name
	Read                   // read Input.Job's state and name
)

func (k Kind) String() string {
	switch k {
	case Submit:
		return "submit"
	case Cancel:
		return "cancel"
	case Update:
		return "update"
	case Read:
		return "read"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Input is an operation as invoked.
type Input struct {
	Kind Kind
	Job  uint64 // the job operated on (not for Submit)
	Name string // Submit's and Update's name
}

// Outcome is how an operation ended.
type Outcome uint8

// The outcomes: Unknown is a write whose answer never came (a timeout, a
// connection lost, a commit that failed on a deposed leader): it may have
// taken effect at any time after its invocation, or never.
const (
	OK       Outcome = iota + 1
	Finished         // refused: the job already completed (or is completing)
	NotFound         // refused: no such job
	Unknown
)

func (o Outcome) String() string {
	return [...]string{"?", "ok", "finished", "not found", "unknown"}[min(int(o), 4)]
}

// Output is an operation's answer.
type Output struct {
	Outcome Outcome
	Job     uint64 // Submit's new id
	State   string // Read's state ("PENDING", "CANCELLED", …)
	Name    string // Read's name
}

// job is the model's state of one job (histories are checked job by job).
type job struct {
	Exists bool
	State  string
	Name   string
}

// Queued and Cancelled are the states the model gives a job: submitted
// jobs wait (the runs check with the scheduler off), cancelled ones end.
const (
	Queued    = "PENDING"
	Cancelled = "CANCELLED"
)

func (j job) finished() bool { return j.State == Cancelled }

// step is the job table's sequential specification, for one job: every
// state the job can be in after the operation, none if the operation
// could not have answered so.
func step(state, input, output any) []any {
	j, in, out := state.(job), input.(Input), output.(Output)
	if out.Outcome == Unknown {
		// Taken effect or not: both states go on.
		return []any{j, apply(j, in)}
	}
	if out.Outcome == NotFound {
		return when(!j.Exists, j)
	}
	switch in.Kind {
	case Submit:
		// A job id is given once: a second submission answered with an
		// id that exists reused it.
		return when(!j.Exists && out.Outcome == OK, job{Exists: true, State: Queued, Name: in.Name})
	case Read:
		return when(j.Exists && out.Outcome == OK && out.State == j.State && out.Name == j.Name, j)
	case Cancel, Update:
		switch out.Outcome {
		case OK:
			return when(j.Exists && !j.finished(), apply(j, in))
		case Finished:
			return when(j.Exists && j.finished(), j)
		}
	}
	return nil
}

// apply is in's effect on j where it has one.
func apply(j job, in Input) job {
	if !j.Exists || j.finished() {
		return j
	}
	switch in.Kind {
	case Cancel:
		j.State = Cancelled
	case Update:
		j.Name = in.Name
	}
	return j
}

func when(ok bool, j job) []any {
	if !ok {
		return nil
	}
	return []any{j}
}

// model is the job table, partitioned by job: operations on different
// jobs commute, so each job's history is checked alone.
func model() porcupine.Model {
	nd := porcupine.NondeterministicModel{
		Partition: byJob,
		Init:      func() []any { return []any{job{}} },
		Step:      step,
		DescribeOperation: func(input, output any) string {
			in, out := input.(Input), output.(Output)
			return describe(in, out)
		},
		DescribeState: func(state any) string {
			j := state.(job)
			if !j.Exists {
				return "absent"
			}
			return fmt.Sprintf("%s %q", j.State, j.Name)
		},
	}
	return nd.ToModel()
}

func describe(in Input, out Output) string {
	switch {
	case in.Kind == Submit && out.Outcome == OK:
		return fmt.Sprintf("submit(%q) -> job %d", in.Name, out.Job)
	case in.Kind == Submit:
		return fmt.Sprintf("submit(%q) -> %s", in.Name, out.Outcome)
	case in.Kind == Read && out.Outcome == OK:
		return fmt.Sprintf("read(%d) -> %s %q", in.Job, out.State, out.Name)
	case in.Kind == Update:
		return fmt.Sprintf("update(%d, %q) -> %s", in.Job, in.Name, out.Outcome)
	}
	return fmt.Sprintf("%s(%d) -> %s", in.Kind, in.Job, out.Outcome)
}

// byJob splits a history by the job each operation is on (a submission's
// job is the id it was answered with).
func byJob(ops []porcupine.Operation) [][]porcupine.Operation {
	idx := map[uint64]int{}
	var parts [][]porcupine.Operation
	for _, op := range ops {
		id := op.Input.(Input).Job
		if op.Input.(Input).Kind == Submit {
			id = op.Output.(Output).Job
		}
		i, ok := idx[id]
		if !ok {
			i = len(parts)
			idx[id] = i
			parts = append(parts, nil)
		}
		parts[i] = append(parts[i], op)
	}
	return parts
}
