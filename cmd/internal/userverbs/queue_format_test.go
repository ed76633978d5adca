package userverbs

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// squeue -r prints one line per array task, the remainder's pending tasks
// expanded; filters, sorting and --json see the controller's records.
func TestQueueArrayTasks(t *testing.T) {
	cl := startCLICluster(t)
	alice := cl.as("alice", nil)
	cl.ok(alice, "sbatch", "--array=1-6%2", "-J", "arr", "--wrap", "x")
	cl.ok(alice, "sbatch", "-J", "solo", "--wrap", "x")
	cl.ok(alice, "scontrol", "hold", "1_3") // splits task 3 off as job 3

	cases := []struct {
		argv []string
		env  map[string]string
		want []string // every line (all have -h)
	}{
		{[]string{"squeue", "-h", "-o", "%i %T"}, nil, []string{"1_[1-2,4-6%2] PENDING", "1_3 PENDING", "2 PENDING"}},
		// Sorted as records, expanded in index order where the record was;
		// at equal priority by the array's id, then the task's (the
		// anchor's squeue puts 65_3, job 65, after 65_1 and 65_2, jobs 66
		// and 67), so the split-off 1_3 comes before job 2.
		{[]string{"squeue", "-r", "-h", "-o", "%i %T %K %F %A"}, nil, []string{
			"1_1 PENDING 1 1 1", "1_2 PENDING 2 1 1", "1_4 PENDING 4 1 1", "1_5 PENDING 5 1 1", "1_6 PENDING 6 1 1",
			"1_3 PENDING 3 1 3", "2 PENDING N/A 2 2"}},
		{[]string{"squeue", "--array", "-h", "-o", "%i"}, nil, []string{"1_1", "1_2", "1_4", "1_5", "1_6", "1_3", "2"}},
		{[]string{"squeue", "-h", "-o", "%i"}, map[string]string{"SQUEUE_ARRAY": "1"}, []string{"1_1", "1_2", "1_4", "1_5", "1_6", "1_3", "2"}},
		// The array's id names every task, the split-off 1_3 too.
		{[]string{"squeue", "-r", "-h", "-j", "1", "-o", "%i"}, nil, []string{"1_1", "1_2", "1_4", "1_5", "1_6", "1_3"}},
		{[]string{"squeue", "-r", "-h", "-j", "1_[4-5],2", "-o", "%i"}, nil, []string{"1_4", "1_5", "2"}},
		{[]string{"squeue", "-r", "-h", "-t", "R", "-o", "%i"}, nil, nil},
		{[]string{"squeue", "-r", "-h", "-t", "PD", "-n", "solo", "-o", "%i"}, nil, []string{"2"}},
	}
	for _, c := range cases {
		out := cl.ok(cl.as("alice", c.env), c.argv...)
		if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); out != "" && !slices.Equal(got, c.want) || out == "" && c.want != nil {
			t.Errorf("%q:\n got %q\nwant %q", c.argv, got, c.want)
		}
	}

	// scontrol show job ARRAY shows the remainder and the split-off task.
	if out := cl.ok(alice, "scontrol", "show", "job", "1"); strings.Count("\n"+out, "\nJobId=") != 2 || !strings.Contains(out, "ArrayTaskId=3") {
		t.Errorf("scontrol show job 1 (an array):\n%s", out)
	}

	var js struct {
		Jobs []struct {
			ID        int    `json:"job_id"`
			TaskRange string `json:"array_task_string"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(cl.ok(alice, "squeue", "-r", "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Jobs) != 3 || js.Jobs[0].TaskRange != "1-2,4-6%2" {
		t.Errorf("squeue -r --json = %+v, want the three records unexpanded", js.Jobs)
	}
}

// squeue -O and sinfo -O: Slurm's field names, 20 wide unless sized, no
// separator but the padding (trailing blanks are trimmed).
func TestLongFormatVerbs(t *testing.T) {
	cl := startCLICluster(t)
	cl.register("n1", 4)
	alice := cl.as("alice", nil)
	cl.ok(alice, "sbatch", "--array=1-6%2", "-J", "arr", "--wrap", "x")
	cl.ok(alice, "sbatch", "-J", "dep", "-n", "4", "--wrap", "x")

	cases := []struct {
		argv []string
		env  map[string]string
		want []string
	}{
		{[]string{"squeue", "-O", "jobid,name,state"}, nil, []string{
			"JOBID               NAME                STATE",
			"1                   arr                 PENDING",
			"2                   dep                 PENDING"}},
		{[]string{"squeue", "--Format=JobArrayID:.14 ,NumTasks:6,ReasonList"}, nil, []string{
			"         JOBID TASKS NODELIST(REASON)",
			"     1_[1-6%2] 1     (None)",
			"             2 4     (None)"}},
		{[]string{"squeue", "-h", "-r", "-O", "arrayjobid:3,arraytaskid:3,name:4"}, nil, []string{
			"1  1  arr", "1  2  arr", "1  3  arr", "1  4  arr", "1  5  arr", "1  6  arr", "2  N/Adep"}},
		// $SQUEUE_FORMAT2 is -O's default; $SQUEUE_FORMAT wins over it.
		{[]string{"squeue", "-h"}, map[string]string{"SQUEUE_FORMAT2": "jobid:3,username"}, []string{"1  alice", "2  alice"}},
		{[]string{"squeue", "-h"}, map[string]string{"SQUEUE_FORMAT2": "jobid:3,username", "SQUEUE_FORMAT": "%u"}, []string{"alice", "alice"}},
		// -l prints the time first, with -O too.
		{[]string{"squeue", "-l", "-j", "2", "-O", "jobid:6,timelimit"}, nil, []string{"Mon Jun  2 09:00:00 2025", "JOBID TIME_LIMIT", "2     1:00:00"}},
		{[]string{"sinfo", "-O", "partition:10,available:.5 ,nodes:.6 ,statelong:.9 ,nodelist"}, nil, []string{
			"PARTITION AVAIL  NODES     STATE NODELIST",
			"gpu*         up      1  unknown* n2",
			"gpu*         up      1      idle n1",
			"debug        up      1      idle n1"}},
		// sinfo keeps the last format: -O over -o.
		{[]string{"sinfo", "-o", "%P", "-O", "PartitionName:6,CPUsState:14,Gres", "-p", "debug"}, nil, []string{
			"PARTITCPUS(A/I/O/T) GRES", "debug 0/16/0/16     gpu:h100:4"}},
		{[]string{"sinfo", "-N", "-h", "-O", "nodelist:4,partition:.6,statecompact:.6"}, nil, []string{
			"n1    gpu*  idle", "n1   debug  idle", "n2    gpu*  unk*"}},
	}
	for _, c := range cases {
		out := cl.ok(cl.as("alice", c.env), c.argv...)
		if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !slices.Equal(got, c.want) {
			t.Errorf("%q:\n got %q\nwant %q", c.argv, got, c.want)
		}
	}

	// An unknown -O field is named and left out, as the anchor's squeue
	// and sinfo do (exit 0); a list with nothing left is refused.
	for _, argv := range [][]string{{"squeue", "-O", "jobid,bogus,name"}, {"sinfo", "-O", "partition,bogus,nodes"}} {
		out, errs, code := runCLI(alice, argv...)
		head := strings.Fields(strings.SplitN(out, "\n", 2)[0])
		if code != 0 || len(head) != 2 || errs != argv[0]+": error: Invalid job format specification: bogus\n" {
			t.Errorf("%q: exit %d, header %q, stderr %q; want 0, two columns, the field named", argv, code, head, errs)
		}
	}
	cl.fails(alice, 1, []string{"squeue", "-O", "bogus"}, "squeue: error: --Format \"bogus\": no fields; Invalid job format specification: bogus")
	cl.fails(alice, 1, []string{"squeue", "-o", "%i", "-O", "jobid"}, "squeue: error: -O (--Format) is incompatible with -o (--format)")
	cl.fails(alice, 1, []string{"parity", "nodes", "--gpus", "-O", "nodelist"}, "parity: nodes: -O (--Format) does not apply to --gpus")
}
