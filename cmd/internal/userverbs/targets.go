package userverbs

import (
	"fmt"
	"strconv"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/workflow"
)

// maxTaskTargets bounds how many array tasks one task set may name for
// verbs that act task by task (one call each).
const maxTaskTargets = 4096

// jobTarget is one job, or one array task, that a verb acts on.
type jobTarget struct {
	id   uint64
	task *int32 // nil: the job (or whole array) id
}

func (t jobTarget) String() string {
	if t.task == nil {
		return strconv.FormatUint(t.id, 10)
	}
	return strconv.FormatUint(t.id, 10) + "_" + strconv.Itoa(int(*t.task))
}

// splitIDWords splits job id words on commas outside brackets, so
// "12,20_[1,3]" is "12" and "20_[1,3]".
func splitIDWords(words []string) []string {
	var out []string
	for _, w := range words {
		depth, start := 0, 0
		for i, r := range w {
			switch r {
			case '[':
				depth++
			case ']':
				depth--
			case ',':
				if depth == 0 {
					if s := strings.TrimSpace(w[start:i]); s != "" {
						out = append(out, s)
					}
					start = i + 1
				}
			}
		}
		if s := strings.TrimSpace(w[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// jobTargetList reads job ids and array task ids ("12", "12,13", "20_3",
// "20_[1-3]"); a task set becomes one target per task.
func jobTargetList(words []string) ([]jobTarget, error) {
	var out []jobTarget
	for _, w := range splitIDWords(words) {
		if !strings.Contains(w, "_") {
			id, err := strconv.ParseUint(w, 10, 64)
			if err != nil || id == 0 {
				return nil, fmt.Errorf("invalid job id %q", w)
			}
			out = append(out, jobTarget{id: id})
			continue
		}
		ref, err := workflow.ParseJobRef(w)
		if err != nil {
			return nil, err
		}
		if ref.Tasks.Len() > maxTaskTargets {
			return nil, fmt.Errorf("job id %q names %d tasks; at most %d at once", w, ref.Tasks.Len(), maxTaskTargets)
		}
		for i := range ref.Tasks.All() {
			task := int32(i)
			out = append(out, jobTarget{id: uint64(ref.Job), task: &task})
		}
	}
	return out, nil
}

// parseJobTargets is jobTargetList for verb, as a usage error when an id is bad.
func parseJobTargets(verb string, words []string) ([]jobTarget, error) {
	ts, err := jobTargetList(words)
	if err != nil {
		return nil, usageError(verb, "%v", err)
	}
	return ts, nil
}

// splitQueueIDs separates squeue -j's plain job ids from its array task
// references, which the controller resolves itself.
func splitQueueIDs(words []string) (ids []uint64, refs []string, err error) {
	for _, w := range splitIDWords(words) {
		if strings.Contains(w, "_") {
			if _, err := workflow.ParseJobRef(w); err != nil {
				return nil, nil, err
			}
			refs = append(refs, w)
			continue
		}
		id, err := strconv.ParseUint(w, 10, 64)
		if err != nil || id == 0 {
			return nil, nil, fmt.Errorf("invalid job id %q", w)
		}
		ids = append(ids, id)
	}
	return ids, refs, nil
}

// targetFail is session.jobFail for a job or task: "<verb>: job 20_3: <message>".
func (s *session) targetFail(t jobTarget, err error) error {
	msg := client.Message(err)
	if name := "job " + t.String(); !strings.HasPrefix(msg, name+":") && !strings.HasPrefix(msg, name+" ") {
		msg = name + ": " + msg // the controller's messages mostly name the job already
	}
	if hint := statusHint(err, s.addr); hint != "" {
		msg += "\n" + hint
	}
	return &exitError{code: 1, err: fmt.Errorf("%s: %s", s.verb, msg)}
}

// getTarget fetches a job or an array task.
func (s *session) getTarget(t jobTarget) (*pb.Job, error) {
	if t.task != nil {
		return s.c.GetTask(s.ctx, t.id, *t.task, false)
	}
	return s.c.GetJob(s.ctx, t.id, false)
}
