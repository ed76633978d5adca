package userverbs

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The "done when": jobs submitted as `parity submit` and as
// `sbatch` (argv[0]) show up in `parity queue` and `squeue`.
func TestSubmitAndQueueEndToEnd(t *testing.T) {
	cl := startCLICluster(t)
	writeScript(t, cl.dir, "train.sh", trainScript)
	alice, bob, olga := cl.as("alice", nil), cl.as("bob", nil), cl.as("olga", nil)

	if out := cl.ok(alice, "parity", "submit", "-p", "gpu", "train.sh", "--epochs", "3"); out != "Submitted batch job 1\n" {
		t.Errorf("parity submit printed %q", out)
	}
	if out := cl.ok(alice, "/usr/local/bin/sbatch", "--parsable", "-J", "probe", "--wrap", "nvidia-smi"); out != "2\n" {
		t.Errorf("sbatch --parsable printed %q", out)
	}
	if out := cl.ok(bob, "sbatch", "-Q", "-p", "debug", "-t", "10", "train.sh"); out != "" {
		t.Errorf("sbatch -Q printed %q", out)
	}

	// Users see their own jobs; the default squeue layout.
	out := cl.ok(alice, "squeue")
	header := strings.SplitN(out, "\n", 2)[0]
	if header != "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)" {
		t.Errorf("squeue header = %q", header)
	}
	if got, want := rows(out), []string{"1 gpu train alice PD 0:00 1 (None)", "2 gpu probe alice PD 0:00 1 (None)"}; !slices.Equal(got, want) {
		t.Errorf("squeue as alice:\n got %q\nwant %q", got, want)
	}
	// An operator sees everyone; filters and formats as squeue's.
	cases := []struct {
		argv []string
		want []string
	}{
		{[]string{"parity", "queue", "-o", "%i %u %j %P %l"}, []string{"3 bob train debug 10:00", "1 alice train gpu 2:00:00", "2 alice probe gpu 1:00:00"}},
		{[]string{"squeue", "-u", "bob", "-o", "%i %u"}, []string{"3 bob"}},
		{[]string{"squeue", "-p", "gpu", "-j", "2,3", "-o", "%i"}, []string{"2"}},
		{[]string{"squeue", "-t", "R"}, nil},
		{[]string{"squeue", "-t", "pd", "-n", "probe", "-o", "%i %T"}, []string{"2 PENDING"}},
		{[]string{"squeue", "-h", "-A", "physics", "-o", "%i"}, nil},
	}
	for _, c := range cases {
		got := rows(cl.ok(olga, c.argv...))
		if c.argv[1] == "-h" {
			got = strings.Fields(cl.ok(olga, c.argv...)) // no header: every line is a row
			c.want = []string{"3", "1", "2"}             // partition order: debug before gpu
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q:\n got %q\nwant %q", c.argv, got, c.want)
		}
	}
	if h := strings.Fields(strings.SplitN(cl.ok(olga, "squeue", "--start"), "\n", 2)[0]); !slices.Equal(h,
		[]string{"JOBID", "PARTITION", "NAME", "USER", "ST", "START_TIME", "NODES", "SCHEDNODES", "NODELIST(REASON)"}) {
		t.Errorf("--start header = %q", h)
	}
	// -l: the time (ctime form) first, then the header.
	if l := strings.Fields(strings.SplitN(cl.ok(olga, "squeue", "-l"), "\n", 3)[1]); !slices.Contains(l, "TIME_LIMI") /* %.9l cuts it, as squeue -l does */ || !slices.Contains(l, "STATE") {
		t.Errorf("-l header = %q", l)
	}
	if rows := rows(cl.ok(cl.as("olga", map[string]string{"SQUEUE_FORMAT": "%u:%i"}), "squeue")); !slices.Equal(rows, []string{"bob:3", "alice:1", "alice:2"}) {
		t.Errorf("SQUEUE_FORMAT rows = %q", rows)
	}

	// --json: slurmrestd's v0.0.44 job objects (TestSlurmJSON checks them
	// against the document).
	var js struct {
		Jobs []struct {
			ID    int      `json:"job_id"`
			User  string   `json:"user_name"`
			State []string `json:"job_state"`
			Name  string   `json:"name"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(cl.ok(alice, "parity", "queue", "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Jobs) != 2 || js.Jobs[0].ID != 1 || js.Jobs[0].Name != "train" || js.Jobs[1].State[0] != "PENDING" {
		t.Errorf("queue --json = %+v", js)
	}

	// Bad input: ours named with its source, the controller's verbatim, exit 1.
	cl.fails(alice, 1, []string{"squeue", "-t", "sleeping"}, "squeue: error: invalid job state specified: sleeping")
	cl.fails(alice, 1, []string{"squeue", "-o", "%i %W"}, "squeue: error: format", "%W")
	cl.fails(alice, 1, []string{"sbatch", "-p", "nosuch", "--wrap", "x"},
		"sbatch: error: --partition=nosuch: invalid partition name specified (partitions: gpu, debug)")
	cl.fails(alice, 1, []string{"sbatch", "-p", "debug", "-t", "2:00:00", "--wrap", "x"}, "sbatch: error: --time=02:00:00", "debug allows at most 00:30:00")
	cl.fails(alice, 1, []string{"sbatch", "--gres=gpu:a100:1", "--wrap", "x"}, "sbatch: error: --gres=gpu:a100:1")
	cl.fails(alice, 1, []string{"sbatch", "-A", "bio", "--wrap", "x"}, "sbatch: error: --account=bio")
	if out := rows(cl.ok(olga, "squeue", "-o", "%i")); len(out) != 3 {
		t.Errorf("rejected submissions were queued: %q", out)
	}

	// --test-only says where and when on standard error, as sbatch does,
	// and queues nothing.
	if out, errOut, code := runCLI(alice, "sbatch", "--test-only", "-p", "debug", "--wrap", "x"); code != 0 || out != "" ||
		!regexp.MustCompile(`^sbatch: Job 4 (to start at \S+ using \d+ processors on nodes \S+|would wait) in partition debug`).MatchString(errOut) {
		t.Errorf("--test-only: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out := rows(cl.ok(olga, "squeue", "-o", "%i")); len(out) != 3 {
		t.Errorf("--test-only queued a job: %q", out)
	}
	var sub map[string]any
	if err := json.Unmarshal([]byte(cl.ok(alice, "sbatch", "--json", "--wrap", "x")), &sub); err != nil || sub["jobId"] != "4" ||
		sub["message"] != "Submitted batch job 4" {
		t.Errorf("submit --json = %v, %v", sub, err)
	}
}

func TestControllerUnreachable(t *testing.T) {
	env := testEnv(t.TempDir(), map[string]string{"PARITY_TOKEN": "pt1.x.y", "PARITY_CONTROLLER": closedAddr(t)}, "")
	_, errs, code := runCLI(env, "squeue")
	if code != 1 || !strings.HasPrefix(errs, "squeue: error: ") || !strings.Contains(errs, "hint: is the controller running at") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
