package format

import (
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

func TestSqueueDefaultLayout(t *testing.T) {
	jobs := testJobs()
	SortJobs(jobs, false)
	var b strings.Builder
	l, err := ParseSqueueFormat(SqueueDefault)
	if err != nil {
		t.Fatal(err)
	}
	if err := Squeue(&b, jobs, l, SqueueOptions{Env: env}); err != nil {
		t.Fatal(err)
	}
	out := lines(b.String())
	wantHeader := "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)"
	mustEqual(t, "header", out[0], wantHeader)
	want := [][]string{
		{"13", "cpu", "prep", "alice", "PD", "0:00", "1", "(JobHeldUser)"},
		{"12", "gpu", "train-ll", "alice", "PD", "0:00", "1", "(Resources)"},
		{"7", "gpu", "ddp", "bob", "R", "2:00:30", "2", "n[001-002]"},
		{"3", "gpu", "x", "carol", "F", "1:30", "1", "(NonZeroExitCode)"},
	}
	if len(out) != len(want)+1 {
		t.Fatalf("got %d lines:\n%s", len(out), b.String())
	}
	for i, w := range want {
		if got := cells(out[i+1]); !slices.Equal(got, w) {
			t.Errorf("row %d = %q, want %q", i, got, w)
		}
		// Every right-justified column ends where its header ends.
		if len(out[i+1]) < len(wantHeader)-len("NODELIST(REASON)") {
			t.Errorf("row %d is shorter than the fixed columns: %q", i, out[i+1])
		}
	}
	mustEqual(t, "JOBID column right-justified", out[3][:18], "                 7")
}

func TestSqueueCodes(t *testing.T) {
	jobs := testJobs()
	cases := []struct {
		format string
		job    int
		want   string
	}{
		{"%i|%T|%l|%L|%C|%D", 1, "7|RUNNING|1-01:00:00|22:59:30|32|2"},
		{"%i|%T|%l|%L|%C|%b", 0, "12|PENDING|1:00:00|1:00:00|32|gres:gpu:h100:4"},
		// A planned pending job's %e is its planned start plus its
		// limit, as the anchor's squeue prints it.
		{"%S|%V|%e", 0, "2025-06-02T12:00:00|2025-06-02T09:00:00|2025-06-02T13:00:00"},
		{"%S", 1, "2025-06-02T08:59:30"},
		{"%E|%f|%m|%r|%N", 2, "afterok:12(unfulfilled)|(null)|0|JobHeldUser|"},
		{"%m|%a|%q|%Q|%y", 0, "64G|physics|normal|1500|0"},
		{"%l|%M|%t|%R", 3, "UNLIMITED|1:30|F|(NonZeroExitCode)"},
		{"%.5i:%3u:%3j|", 1, "    7:bob:ddp|"},
		{"%5i|%2u|100%%", 2, "13   |al|100%"},
		{"%B %N", 1, "n001 n[001-002]"},
	}
	for _, c := range cases {
		l, err := ParseSqueueFormat(c.format)
		if err != nil {
			t.Fatalf("%q: %v", c.format, err)
		}
		var b strings.Builder
		if err := Squeue(&b, jobs[c.job:c.job+1], l, SqueueOptions{Env: env, NoHeader: true}); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, c.format, strings.TrimSuffix(b.String(), "\n"), c.want)
	}
}

func TestSqueueStartLayoutAndOrder(t *testing.T) {
	jobs := testJobs()[:3]
	jobs[2].ExpectedStart = ts(0)
	SortJobs(jobs, true)
	var ids []uint64
	for _, j := range jobs {
		ids = append(ids, j.GetId())
	}
	if !slices.Equal(ids, []uint64{13, 12, 7}) {
		t.Errorf("--start order = %v, want [13 12 7] (by expected start, unknown last)", ids)
	}
	l, _ := ParseSqueueFormat(SqueueStart)
	var b strings.Builder
	if err := Squeue(&b, jobs, l, SqueueOptions{Env: env}); err != nil {
		t.Fatal(err)
	}
	out := lines(b.String())
	mustEqual(t, "header", strings.Join(cells(out[0]), " "), "JOBID PARTITION NAME USER ST START_TIME NODES SCHEDNODES NODELIST(REASON)")
	mustEqual(t, "row 12", strings.Join(cells(out[2]), " "), "12 gpu train-ll alice PD 2025-06-02T12:00:00 1 (null) (Resources)")
}

func TestSqueueLongPrintsTheDate(t *testing.T) {
	l, err := ParseSqueueFormat(SqueueLong)
	if err != nil {
		t.Fatal(err)
	}
	header := "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)"
	cases := []struct {
		name string
		o    SqueueOptions
		want []string // the first two lines
	}{
		// ctime(3)'s form, in the Env's zone, as squeue -l prints it.
		{"-l", SqueueOptions{Env: env, Date: true}, []string{"Mon Jun  2 11:00:00 2025", header}},
		{"-l, another zone", SqueueOptions{Env: Env{Now: env.Now, Loc: time.FixedZone("EST", -5*3600)}, Date: true},
			[]string{"Mon Jun  2 06:00:00 2025", header}},
		{"no -l", SqueueOptions{Env: env}, []string{header, "                 7       gpu      ddp      bob  RUNNING    2:00:30 1-01:00:0      2 n[001-002]"}},
		{"-h -l: neither date nor header", SqueueOptions{Env: env, Date: true, NoHeader: true},
			[]string{"                 7       gpu      ddp      bob  RUNNING    2:00:30 1-01:00:0      2 n[001-002]", ""}},
	}
	for _, c := range cases {
		var b strings.Builder
		if err := Squeue(&b, testJobs()[1:2], l, c.o); err != nil {
			t.Fatal(err)
		}
		got := append(strings.Split(b.String(), "\n"), "")[:2]
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestParseSqueueFormatErrors(t *testing.T) {
	for _, f := range []string{"%i %Z%", "%W", "plain text", "%.", "%99999i"} {
		if _, err := ParseSqueueFormat(f); err == nil {
			t.Errorf("ParseSqueueFormat(%q) accepted", f)
		}
	}
	_, err := ParseSqueueFormat("%i %W")
	if err == nil || !strings.Contains(err.Error(), "%W") {
		t.Errorf("error %v does not name the field", err)
	}
}

func TestStates(t *testing.T) {
	for long, short := range map[string]string{"PENDING": "PD", "RUNNING": "R", "COMPLETING": "CG", "COMPLETED": "CD", "FAILED": "F",
		"CANCELLED": "CA", "TIMEOUT": "TO", "OUT_OF_MEMORY": "OOM", "NODE_FAIL": "NF", "PREEMPTED": "PR", "REQUEUED": "RQ", "BOGUS": "BOGUS"} {
		mustEqual(t, "CompactState("+long+")", CompactState(long), short)
	}
	got, all, err := ParseJobStates([]string{"pd,R", "completed", "oom", "PD"})
	if err != nil || all || !slices.Equal(got, []string{"PENDING", "RUNNING", "COMPLETED", "OUT_OF_MEMORY"}) {
		t.Errorf("ParseJobStates = %v %v %v", got, all, err)
	}
	if _, all, _ := ParseJobStates([]string{"R,all"}); !all {
		t.Error("all not recognised")
	}
	if _, _, err := ParseJobStates([]string{"R,sleeping"}); err == nil || !strings.Contains(err.Error(), "sleeping") {
		t.Errorf("bad state error = %v", err)
	}
	j := testJobs()[1]
	j.State, j.RequeuePending = "COMPLETING", true
	mustEqual(t, "requeueing job", CompactState(JobState(j)), "RQ")
}

func TestDurations(t *testing.T) {
	cases := []struct {
		secs                     int64
		elapsed, limit, part, cl string
	}{
		{0, "0:00", "UNLIMITED", "infinite", "00:00:00"},
		{59, "0:59", "0:59", "0:59", "00:00:59"},
		{3600, "1:00:00", "1:00:00", "1:00:00", "01:00:00"},
		{30 * 60, "30:00", "30:00", "30:00", "00:30:00"},
		{2*86400 + 3*3600 + 4*60 + 5, "2-03:04:05", "2-03:04:05", "2-03:04:05", "2-03:04:05"},
		{-5, "INVALID", "UNLIMITED", "infinite", "INVALID"},
	}
	for _, c := range cases {
		mustEqual(t, "Elapsed", Elapsed(c.secs), c.elapsed)
		mustEqual(t, "Limit", Limit(c.secs), c.limit)
		mustEqual(t, "PartitionLimit", PartitionLimit(c.secs), c.part)
		mustEqual(t, "Clock", Clock(c.secs), c.cl)
	}
}

// TestReasonText: ReqNodeNotAvail carries Slurm's words for its cause in
// squeue's %R and scontrol's Reason=; other reasons print bare.
func TestReasonText(t *testing.T) {
	for _, c := range []struct {
		reason, detail, squeue, scontrol string
	}{
		{"ReqNodeNotAvail", "Reserved for maintenance", "(ReqNodeNotAvail, Reserved for maintenance)", "ReqNodeNotAvail,_Reserved_for_maintenance"},
		{"ReqNodeNotAvail", "UnavailableNodes:n4", "(ReqNodeNotAvail, UnavailableNodes:n4)", "ReqNodeNotAvail,_UnavailableNodes:n4"},
		{"Resources", "needs 4 node(s)", "(Resources)", "Resources"},
		// Too few nodes up: slurmctld's state_desc, as the anchor's
		// squeue and scontrol print it for a 4-node job with two of four
		// nodes drained.
		{"Resources", "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions",
			"(Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions)",
			"Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_in_higher_priority_partitions"},
		{"", "", "(None)", "None"},
	} {
		j := &pb.Job{Id: 5, State: "PENDING", Reason: c.reason, ReasonDetail: c.detail, Spec: &pb.JobSpec{Name: "x"}}
		mustEqual(t, c.reason+" %R", ReasonOrNodes(j), c.squeue)
		if want := strings.Trim(c.squeue, "()"); !strings.HasPrefix(c.reason, "ReqNodeNotAvail") {
			mustEqual(t, c.reason+" %r", reasonColumn(j), want)
		}
		var b strings.Builder
		if err := ShowJobs(&b, []*pb.Job{j}, ShowOptions{Env: env}); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, c.reason+" Reason=", pairs(t, b.String(), false)[0]["Reason"], c.scontrol)
	}
}
