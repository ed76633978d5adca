package format

import (
	"strconv"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// fieldTasks is squeue -O NumTasks, which has no % code: not a letter, so
// -o cannot name it.
const fieldTasks byte = 1

// squeueFields maps squeue -O names (lower case) to the codes that render
// them, as Slurm 22.05's squeue reads them. Note JobID is %A (the job's
// own id, the array's for its remainder) and JobArrayID is %i (123_7,
// 123_[8-10]); Priority is %p (normalised) and PriorityLong %Q. Names
// Parity has no data for (WCKey, Licenses...) are left out, so
// they are rejected rather than printed empty.
var squeueFields = map[string]byte{
	"account":       'a',
	"arrayjobid":    'F',
	"arraytaskid":   'K',
	"batchhost":     'B',
	"comment":       'k',
	"command":       'o',
	"contiguous":    'O',
	"dependency":    'E',
	"endtime":       'e',
	"feature":       'f',
	"gres":          'b', // vestigial in Slurm: tres-per-node
	"groupid":       'G',
	"groupname":     'g',
	"jobarrayid":    'i',
	"jobid":         'A',
	"mincpus":       'c',
	"minmemory":     'm',
	"name":          'j',
	"nice":          'y',
	"nodelist":      'N',
	"numcpus":       'C',
	"numnodes":      'D',
	"numtasks":      fieldTasks,
	"oversubscribe": 'h',
	"shared":        'h',
	"partition":     'P',
	"priority":      'p',
	"prioritylong":  'Q',
	"qos":           'q',
	"reason":        'r',
	"reasonlist":    'R',
	"reqnodes":      'n',
	"reservation":   'v',
	"schednodes":    'Y',
	"starttime":     'S',
	"state":         'T',
	"statecompact":  't',
	"submittime":    'V',
	"timeleft":      'L',
	"timelimit":     'l',
	"timeused":      'M',
	"tres-per-node": 'b',
	"userid":        'U',
	"username":      'u',
	"workdir":       'Z',
}

// jobRow is one squeue line: a job as the controller sent it, or (squeue
// -r) one task still waiting in an array's remainder record, which prints
// as that record except for its own task id.
type jobRow struct {
	job  *pb.Job
	task int // the remainder task's index; -1 for the record itself
}

// squeueRows is one row per job or, with expand, one per task of each
// array remainder record, by index where the record was. Only the rows
// are held (two words each), never a copy of a record.
func squeueRows(jobs []*pb.Job, expand bool) []jobRow {
	rows := make([]jobRow, 0, len(jobs))
	for _, j := range jobs {
		tasks, ok := remainderTasks(j)
		if !expand || !ok {
			rows = append(rows, jobRow{job: j, task: -1})
			continue
		}
		for i := range tasks.All() {
			rows = append(rows, jobRow{job: j, task: i})
		}
	}
	return rows
}

// squeueColumns are jobColumns over rows, with the array task fields of
// expanded rows, the owner's ids and the -O only fields.
func squeueColumns(o SqueueOptions) map[byte]column[jobRow] {
	base := jobColumns(o.Env)
	cols := make(map[byte]column[jobRow], len(base)+4)
	for code, c := range base {
		cols[code] = column[jobRow]{c.header, func(r jobRow) string { return c.value(r.job) }}
	}
	// An expanded task is named by its index, without the throttle.
	perTask := func(code byte, f func(jobRow) string) {
		c := cols[code]
		cols[code] = column[jobRow]{c.header, func(r jobRow) string {
			if r.task < 0 {
				return c.value(r)
			}
			return f(r)
		}}
	}
	perTask('i', func(r jobRow) string {
		return strconv.FormatUint(r.job.GetArrayJobId(), 10) + "_" + strconv.Itoa(r.task)
	})
	perTask('K', func(r jobRow) string { return strconv.Itoa(r.task) })
	owner := func(f func(UserIDs) string) func(jobRow) string {
		return func(r jobRow) string {
			if o.Users != nil {
				if ids, ok := o.Users(r.job.GetUser()); ok {
					return f(ids)
				}
			}
			return "N/A"
		}
	}
	cols['U'] = column[jobRow]{"UID", owner(func(u UserIDs) string { return u.UID })}
	cols['g'] = column[jobRow]{"GROUP", owner(func(u UserIDs) string { return u.Group })}
	cols['G'] = column[jobRow]{"GROUP", owner(func(u UserIDs) string { return u.GID })}
	cols[fieldTasks] = column[jobRow]{"TASKS", func(r jobRow) string { return strconv.Itoa(taskCount(r.job.GetSpec())) }}
	return cols
}
