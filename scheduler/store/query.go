package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
)

// whereOf turns f into SQL conditions with their arguments; together they
// select exactly the lines accounting.Filter.Matches accepts.
func whereOf(f *Filter) (string, []any) {
	var conds []string
	var args []any
	inList := func(col string, vals []string) {
		if len(vals) == 0 {
			return
		}
		conds = append(conds, col+" IN (?"+strings.Repeat(",?", len(vals)-1)+")")
		for _, v := range vals {
			args = append(args, v)
		}
	}
	inList("user", f.Users)
	inList("account", f.Accounts)
	inList("partition", f.Partitions)
	inList("qos", f.QOS)
	inList("name", f.Names)
	if f.AllocationsOnly {
		conds = append(conds, "step = ''")
	}
	if len(f.States) > 0 {
		c, a := statesDuring(f)
		conds, args = append(conds, c), append(args, a...)
	} else {
		if !f.Start.IsZero() {
			conds = append(conds, "end_key >= ?")
			args = append(args, f.Start.Unix())
		}
		if !f.End.IsZero() {
			conds = append(conds, "begin_ts <= ?")
			args = append(args, f.End.Unix())
		}
	}
	if len(f.Jobs) > 0 {
		var alts []string
		for _, s := range f.Jobs {
			var c string
			if s.Task >= 0 {
				c = "(array_job_id = ? AND array_task_id = ?)"
				args = append(args, int64(s.ID), s.Task)
			} else {
				c = "(job_id = ? OR array_job_id = ?)"
				args = append(args, int64(s.ID), int64(s.ID))
			}
			if s.HasStep {
				c = "(" + c + " AND step = ?)"
				args = append(args, s.Step)
			}
			alts = append(alts, c)
		}
		conds = append(conds, "("+strings.Join(alts, " OR ")+")")
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// statesDuring is accounting.Filter's inStateDuring for every state of
// f, or'ed: pending or running at some time in the window, or ended in
// the state within it.
func statesDuring(f *Filter) (string, []any) {
	var alts []string
	var args []any
	// bound adds "col op t" unless t is unset (an open window side).
	bound := func(conds []string, col, op string, t time.Time) []string {
		if t.IsZero() {
			return conds
		}
		args = append(args, t.Unix())
		return append(conds, col+" "+op+" ?")
	}
	for _, st := range f.States {
		var c []string
		switch st {
		case accounting.StatePending:
			c = bound([]string{"begin_ts > 0"}, "begin_ts", "<=", f.End)
			if !f.Start.IsZero() {
				c = append(c, "(start = 0 OR start >= ?)")
				args = append(args, f.Start.Unix())
			}
		case accounting.StateRunning:
			c = bound([]string{"start > 0"}, "start", "<=", f.End)
			if !f.Start.IsZero() {
				c = append(c, `("end" = 0 OR "end" >= ?)`)
				args = append(args, f.Start.Unix())
			}
		default:
			c = []string{"state = ?", `"end" > 0`}
			args = append(args, string(st))
			c = bound(c, `"end"`, ">=", f.Start)
			c = bound(c, `"end"`, "<=", f.End)
		}
		alts = append(alts, "("+strings.Join(c, " AND ")+")")
	}
	return "(" + strings.Join(alts, " OR ") + ")", args
}

// Query returns the lines f selects (see Ledger).
func (s *SQLite) Query(ctx context.Context, f Filter) ([]JobRecord, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	where, args := whereOf(&f)
	rows, err := s.r.QueryContext(ctx, "SELECT "+strings.Join(columns, ",")+" FROM jobs"+where, args...)
	if err != nil {
		return nil, fmt.Errorf("store: query: %w", err)
	}
	defer rows.Close()
	var out []JobRecord
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: query: %w", err)
	}
	accounting.SortRecords(out)
	if !f.Duplicates {
		out = accounting.LatestRuns(out)
	}
	return out, nil
}

// Usage returns the spans of started runs overlapping [since, until).
func (s *SQLite) Usage(ctx context.Context, since, until time.Time) ([]Span, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := s.r.QueryContext(ctx, `SELECT job_id, run, user, account, partition, start, end, alloc_tres
FROM jobs WHERE step = '' AND start > 0 AND start < ? AND end_key > ?`, until.Unix(), since.Unix())
	if err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	defer rows.Close()
	var out []Span
	for rows.Next() {
		var sp Span
		var jobID, start, end int64
		var alloc string
		if err := rows.Scan(&jobID, &sp.Run, &sp.User, &sp.Account, &sp.Partition, &start, &end, &alloc); err != nil {
			return nil, fmt.Errorf("store: usage: %w", err)
		}
		sp.JobID, sp.Start, sp.End = uint64(jobID), timeOf(start), timeOf(end)
		if sp.AllocTRES, err = accounting.ParseTRES(alloc); err != nil {
			return nil, fmt.Errorf("store: job %d: stored AllocTRES: %w", sp.JobID, err)
		}
		out = append(out, sp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	return out, nil
}
