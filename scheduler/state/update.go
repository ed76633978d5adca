package state

import (
	"fmt"
	"strings"
)

func (m *Machine[R]) flag(c Flag) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	switch {
	case j.State != Running:
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s; only running jobs are flagged", c.Job, j.State))
	case !c.Clear:
		j.Reason, j.Detail = c.Reason, c.Detail
	case j.Reason == c.Reason:
		j.Reason, j.Detail = "None", ""
	}
	return nil, nil
}

func (m *Machine[R]) update(c Update) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	switch {
	case Terminal(j.State):
		return nil, alreadyDone(j)
	case c.Place != nil && j.State != Pending:
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s; partition, QOS and account change only while pending", c.Job, j.State))
	case c.Place != nil && len(c.Place.Partitions) == 0:
		return nil, fmt.Errorf("%w: update job %d: a placement without a partition", ErrInvalid, c.Job)
	case c.TimeLimit != nil && *c.TimeLimit <= 0:
		return nil, fmt.Errorf("%w: update job %d: time limit %s", ErrInvalid, c.Job, *c.TimeLimit)
	}
	// The record shows the job as it was.
	ev := logged(KindUpdate, j, c.By)
	var changed []string
	if c.TimeLimit != nil {
		j.Core.TimeLimit = *c.TimeLimit
		changed = append(changed, "TimeLimit")
	}
	if c.Nice != nil {
		j.Core.Nice = *c.Nice
		changed = append(changed, "Nice")
	}
	if c.Name != nil {
		j.Core.Name = *c.Name
		changed = append(changed, "Name")
	}
	changed = append(changed, c.Also...)
	if p := c.Place; p != nil {
		j.Core.QOS, j.Core.Account = p.QOS, p.Account
		j.Core.Partition, j.Core.Partitions = p.Partitions[0], nil
		if len(p.Partitions) > 1 {
			j.Core.Partitions = p.Partitions
		}
		changed = append(changed, "Partition", "QOS", "Account")
	}
	ev.Fields = map[string]string{"changed": strings.Join(changed, ",")}
	return []Effect{ev}, nil
}
