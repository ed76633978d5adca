package format

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// arrayJobs is the Slurm 22.05 session the -r and -O output was taken
// from: array 225 (--array=1-6%2) with tasks 1 and 2 running and 3-6 held
// back by the throttle, and job 226 held.
func arrayJobs() []*pb.Job {
	task := func(id uint64, index int32) *pb.Job {
		return &pb.Job{Id: id, User: "alice", State: "RUNNING", Partition: "gpu", Priority: 100, ArrayJobId: 225,
			ArrayTask: true, ArrayTaskId: index, ArrayName: "225_" + strconv.Itoa(int(index)), StartTime: ts(0),
			Alloc: []*pb.NodeAlloc{{Node: "n001", Cpus: "0"}}, Spec: &pb.JobSpec{Name: "arr", Array: "1-6%2"}}
	}
	return []*pb.Job{
		task(228, 2),
		{Id: 226, User: "alice", State: "PENDING", Reason: "JobHeldUser", Hold: "user", Partition: "gpu",
			Spec: &pb.JobSpec{Name: "dep", Ntasks: 4}},
		task(227, 1),
		{Id: 225, User: "alice", State: "PENDING", Reason: "JobArrayTaskLimit", Partition: "gpu", Priority: 100,
			ArrayJobId: 225, ArrayName: "225_[3-6%2]", Spec: &pb.JobSpec{Name: "arr", Array: "1-6%2"}},
	}
}

// arrayTasks is array 225 alone, its records in the controller's order.
func arrayTasks() []*pb.Job {
	js := arrayJobs()
	return []*pb.Job{js[3], js[2], js[0]}
}

func squeueWith(t *testing.T, jobs []*pb.Job, l Layout, o SqueueOptions) []string {
	t.Helper()
	var b strings.Builder
	if err := Squeue(&b, jobs, l, o); err != nil {
		t.Fatal(err)
	}
	return lines(b.String())
}

func TestSqueueArrayTasks(t *testing.T) {
	held := func(name string) []*pb.Job {
		return []*pb.Job{{Id: 9, State: "PENDING", Reason: "Priority", ArrayJobId: 9, ArrayName: name, Spec: &pb.JobSpec{}}}
	}
	cases := []struct {
		name   string
		jobs   []*pb.Job
		format string
		array  bool
		want   []string
	}{
		// squeue -r -h -o "%i %T %r", verbatim from Slurm 22.05.
		{"-r", arrayTasks(), "%i %T %r", true, []string{
			"225_3 PENDING JobArrayTaskLimit", "225_4 PENDING JobArrayTaskLimit", "225_5 PENDING JobArrayTaskLimit",
			"225_6 PENDING JobArrayTaskLimit", "225_1 RUNNING None", "225_2 RUNNING None"}},
		{"without -r", arrayTasks(), "%i %T %r", false, []string{
			"225_[3-6%2] PENDING JobArrayTaskLimit", "225_1 RUNNING None", "225_2 RUNNING None"}},
		// Every expanded task keeps the record's ids and state.
		{"array fields", arrayJobs()[3:], "%i|%F|%K|%A|%t|%R", true, []string{
			"225_3|225|3|225|PD|(JobArrayTaskLimit)", "225_4|225|4|225|PD|(JobArrayTaskLimit)",
			"225_5|225|5|225|PD|(JobArrayTaskLimit)", "225_6|225|6|225|PD|(JobArrayTaskLimit)"}},
		{"a split-off task is already one line", arrayJobs()[:1], "%i %K", true, []string{"225_2 2"}},
		{"plain job", arrayJobs()[1:2], "%i %K", true, []string{"226 N/A"}},
		{"lone task", held("9_4"), "%i %K", true, []string{"9_4 4"}},
		{"steps and lists", held("9_[0-10:5,12%3]"), "%i", true, []string{"9_0", "9_5", "9_10", "9_12"}},
		{"nothing left", held("9_[]"), "%i", true, []string{"9_[]"}},
	}
	for _, c := range cases {
		l, err := ParseSqueueFormat(c.format)
		if err != nil {
			t.Fatal(err)
		}
		SortJobs(c.jobs, false)
		if got := squeueWith(t, c.jobs, l, SqueueOptions{Env: env, NoHeader: true, Array: c.array}); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// A 100,000-task remainder is one range until it is printed, and prints
// in order.
func TestSqueueLargeArray(t *testing.T) {
	j := &pb.Job{Id: 9, State: "PENDING", ArrayJobId: 9, ArrayName: "9_[0-99999%10]", Spec: &pb.JobSpec{}}
	tasks, ok := remainderTasks(j)
	if !ok || tasks.Len() != 100000 || len(tasks.Ranges()) != 1 {
		t.Fatalf("remainderTasks = %v, %v", tasks, ok)
	}
	l, _ := ParseSqueueFormat("%i")
	out := squeueWith(t, []*pb.Job{j}, l, SqueueOptions{Env: env, Array: true})
	if len(out) != 100001 || out[1] != "9_0" || out[50001] != "9_50000" || out[100000] != "9_99999" {
		t.Errorf("got %d lines, %q ... %q", len(out), out[1], out[len(out)-1])
	}
}

func TestSqueueLongFormat(t *testing.T) {
	users := func(name string) (UserIDs, bool) {
		return UserIDs{UID: "1000", Group: "staff", GID: "50"}, name == "alice"
	}
	cases := []struct {
		spec string
		want []string
	}{
		// squeue -O jobid,name,state,reason, verbatim from Slurm 22.05 but
		// for the trailing blanks; JobID is the record's own id.
		{"jobid,name,state,reason", []string{
			"JOBID               NAME                STATE               REASON",
			"225                 arr                 PENDING             JobArrayTaskLimit",
			"226                 dep                 PENDING             JobHeldUser"}},
		{"JobID,NAME,State,reason", []string{
			"JOBID               NAME                STATE               REASON",
			"225                 arr                 PENDING             JobArrayTaskLimit",
			"226                 dep                 PENDING             JobHeldUser"}},
		// '.' right-justifies, a bare ':' prints as is, a suffix follows,
		// a longer value is cut.
		{"jobid:.6,name:|,reason:5", []string{" JOBIDNAME|REASO", "   225arr|JobAr", "   226dep|JobHe"}},
		{"JobArrayID:14 ,ArrayJobID:.13,ArrayTaskID:.14", []string{
			"JOBID           ARRAY_JOB_ID ARRAY_TASK_ID", "225_[3-6%2]              225         3-6%2", "226                      226           N/A"}},
		{"reasonlist:20,numtasks:6,numcpus:5,numnodes:6,partition:10,username:6,groupname:6,userid:5,groupid",
			[]string{"NODELIST(REASON)    TASKS CPUS NODES PARTITION USER  GROUP UID  GROUP",
				"(JobArrayTaskLimit) 1     1    1     gpu       alice staff 1000 50",
				"(JobHeldUser)       4     4    1     gpu       alice staff 1000 50"}},
		{"prioritylong:4,priority:12,statecompact:3,timelimit:11,timeused:5,timeleft:10", []string{
			"PRIOPRIORITY    ST TIME_LIMIT TIME TIME_LEFT", "100 0.0000000232PD UNLIMITED  0:00 UNLIMITED", "0   0.0000000000PD UNLIMITED  0:00 UNLIMITED"}},
	}
	jobs := arrayJobs()[1:2]
	jobs = append([]*pb.Job{arrayJobs()[3]}, jobs...)
	for _, c := range cases {
		l, err := ParseSqueueLongFormat(c.spec)
		if err != nil {
			t.Fatalf("%q: %v", c.spec, err)
		}
		if got := squeueWith(t, jobs, l, SqueueOptions{Env: env, Users: users}); !slices.Equal(got, c.want) {
			t.Errorf("-O %s:\n got %q\nwant %q", c.spec, got, c.want)
		}
	}
}

func TestLongFormatErrors(t *testing.T) {
	cases := []struct{ spec, want string }{
		{"bogus", "Invalid job format specification: bogus"},
		{"WCKey", "Invalid job format specification: WCKey"}, // Parity keeps no WCKey
		{"jobid:99999", "out of range"},
		{",,", "no fields"},
	}
	for _, c := range cases {
		if _, err := ParseSqueueLongFormat(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSqueueLongFormat(%q) = %v, want %q", c.spec, err, c.want)
		}
	}
	// An unknown field among known ones is left out with a warning.
	l, err := ParseSinfoLongFormat("partition,freemem")
	if err != nil || len(l.Codes()) != 1 || !slices.Equal(l.Warnings(), []string{"Invalid job format specification: freemem"}) {
		t.Errorf("sinfo -O partition,freemem: %v, %d fields, warnings %q", err, len(l.Codes()), l.Warnings())
	}
	// -O only fields have no % code.
	if _, err := ParseSqueueFormat("%i %\x01"); err == nil {
		t.Error("-o accepted an internal field code")
	}
}

func TestSinfoLongFormat(t *testing.T) {
	cases := []struct {
		spec string
		o    SinfoOptions
		want []string
	}{
		{"partition:10,available:.5 ,time:.10 ,nodes:.6 ,statecompact:.6 ,nodelist", SinfoOptions{}, []string{
			"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST",
			"gpu*         up 2-00:00:00      1  drain n003",
			"gpu*         up 2-00:00:00      2    mix n[001-002]",
			"gpu*         up 2-00:00:00      1   idle n004",
			"debug        up      30:00      1  drain n003",
			"debug        up      30:00      1   idle n004",
			"cpu        down   infinite      1   unk* c1"}},
		{"PartitionName,CPUsState,NodeAIOT,Gres,StateLong", SinfoOptions{}, []string{
			"PARTITION           CPUS(A/I/O/T)       NODES(A/I/O/T)      GRES                STATE",
			"gpu                 0/0/64/64           0/0/1/1             gpu:h100:4          drained",
			"gpu                 32/96/0/128         2/0/0/2             gpu:h100:4          mixed",
			"gpu                 0/64/0/64           0/1/0/1             gpu:h100:4          idle",
			"debug               0/0/64/64           0/0/1/1             gpu:h100:4          drained",
			"debug               0/64/0/64           0/1/0/1             gpu:h100:4          idle",
			"cpu                 0/0/32/32           0/0/1/1             (null)              unknown*"}},
		{"nodehost:6,cpus:4,memory:.8 ,features:14 ,reason", SinfoOptions{PerNode: true}, []string{
			"HOSTNACPUS  MEMORY AVAIL_FEATURES REASON",
			"c1    32     64000 (null)         none",
			"n001  64    512000 h100,nvlink    none",
			"n002  64    512000 h100,nvlink    none",
			"n003  64    512000 h100,nvlink    bad fan",
			"n004  64    512000 h100,nvlink    none"}},
	}
	for _, c := range cases {
		l, err := ParseSinfoLongFormat(c.spec)
		if err != nil {
			t.Fatalf("%q: %v", c.spec, err)
		}
		var b strings.Builder
		c.o.Env = env
		if err := Sinfo(&b, testPartitions(), testNodes(), l, c.o); err != nil {
			t.Fatal(err)
		}
		if got := lines(b.String()); !slices.Equal(got, c.want) {
			t.Errorf("-O %s:\n got %q\nwant %q", c.spec, got, c.want)
		}
	}
}
