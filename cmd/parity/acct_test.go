package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/store"
)

// acctNow is Wednesday 2024-03-13 15:00 UTC.
var acctNow = time.Date(2024, 3, 13, 15, 0, 0, 0, time.UTC)

func testAcctEnv(vars map[string]string) acctEnv {
	return acctEnv{now: func() time.Time { return acctNow }, loc: time.UTC, getenv: func(k string) string { return vars[k] }}
}

func runAcctCmd(t *testing.T, cmd *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// testLedger writes a small ledger: alice's H100 job today (with a batch
// step), bob's MI300X job yesterday, carol's failed job today, requeued.
func testLedger(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := store.OpenSQLite(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tr := func(s string) accounting.TRES {
		v, err := accounting.ParseTRES(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	at := func(d, h int) time.Time { return time.Date(2024, 3, d, h, 0, 0, 0, time.UTC) }
	alice := store.JobRecord{JobID: 10, Name: "train", User: "alice", Account: "physics", Partition: "h100",
		Submit: at(13, 8), Eligible: at(13, 8), Start: at(13, 9), End: at(13, 11), State: accounting.StateCompleted,
		NodeList: "gpu01", NNodes: 1, AllocTRES: tr("billing=16,cpu=8,gres/gpu=2,gres/gpu:h100=2,mem=64G,node=1"),
		ReqTRES: tr("cpu=8,gres/gpu=2,mem=64G,node=1"), GPUUUIDs: []string{"GPU-a1", "GPU-a2"}}
	batch := alice
	batch.Step = accounting.StepBatch
	bob := store.JobRecord{JobID: 11, Name: "sim", User: "bob", Account: "physics", Partition: "mi300",
		Submit: at(12, 8), Eligible: at(12, 8), Start: at(12, 9), End: at(12, 13), State: accounting.StateCompleted,
		NodeList: "amd01", NNodes: 1, AllocTRES: tr("billing=16,cpu=8,gres/gpu=2,gres/gpu:mi300x=2,mem=64G,node=1")}
	carol0 := store.JobRecord{JobID: 12, Name: "md", User: "carol", Account: "chem", Partition: "h100",
		Submit: at(13, 1), Eligible: at(13, 1), Start: at(13, 2), End: at(13, 3), State: accounting.StateNodeFail, ExitCode: 1,
		NodeList: "gpu02", NNodes: 1, AllocTRES: tr("billing=8,cpu=4,gres/gpu=1,node=1")}
	carol1 := carol0
	carol1.Run, carol1.Start, carol1.End, carol1.State, carol1.ExitCode = 1, at(13, 4), at(13, 5), accounting.StateFailed, 2
	if err := l.RecordMany(context.Background(), []store.JobRecord{alice, batch, bob, carol0, carol1}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAcctDefaultWindowAndColumns(t *testing.T) {
	path := testLedger(t)
	out, err := runAcctCmd(t, newAcctCmdWith(testAcctEnv(nil)), "--ledger", path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := strings.Join(strings.Fields(lines[0]), ","); got != accounting.DefaultFormat {
		t.Fatalf("header %q", lines[0])
	}
	// Today's jobs only (bob's ran yesterday); carol's latest run only.
	var ids []string
	for _, l := range lines[2:] {
		ids = append(ids, strings.Fields(l)[0])
	}
	if strings.Join(ids, " ") != "10 10.batch 12" {
		t.Fatalf("jobs shown %v, want today's 10, 10.batch, 12 (run 1)\n%s", ids, out)
	}
	if !strings.Contains(lines[4], "FAILED") || !strings.Contains(lines[4], "2:0") {
		t.Errorf("carol's line %q should be her last run (FAILED, 2:0)", lines[4])
	}
}

func TestAcctFiltersAndFormats(t *testing.T) {
	path := testLedger(t)
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"user, window, parsable2", []string{"-u", "Bob", "-S", "2024-03-12", "-E", "now", "-P", "-o", "JobID,User,Partition,State"},
			nil, "JobID|User|Partition|State\n11|bob|mi300|COMPLETED\n"},
		{"-X hides steps, -D shows both runs", []string{"-X", "-D", "-P", "-n", "-o", "JobID,Restarts,State"},
			nil, "10|0|COMPLETED\n12|0|NODE_FAIL\n12|1|FAILED\n"},
		{"-j since the epoch", []string{"-j", "11", "-p", "-n", "-o", "JobID,NodeList"}, nil, "11|amd01|\n"},
		{"-s short and long names at a time", []string{"-s", "f,nf", "-S", "today", "-E", "now", "-X", "-D", "-P", "-n", "-o", "JobID,State"},
			nil, "12|NODE_FAIL\n12|FAILED\n"},
		// With -s and no -E the window ends at -S (the anchor's sacct).
		{"-s without -E", []string{"-s", "f,nf", "-S", "today", "-X", "-D", "-P", "-n", "-o", "JobID,State"}, nil, ""},
		{"-A account", []string{"-A", "CHEM", "-P", "-n", "-o", "JobID"}, nil, "12\n"},
		{"SACCT_FORMAT", []string{"-X", "-P", "-n", "-u", "alice"}, map[string]string{"SACCT_FORMAT": "JobID,AllocTRES"},
			"10|billing=16,cpu=8,gres/gpu=2,gres/gpu:h100=2,mem=64G,node=1\n"},
		{"brief", []string{"-b", "-X", "-P", "-u", "alice"}, nil, "JobID|State|ExitCode\n10|COMPLETED|0:0\n"},
		{"width and truncation", []string{"-X", "-u", "alice", "-n", "-o", "JobName%4,GPUUUIDs%-13"}, nil, "tra+ GPU-a1,GPU-a2\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runAcctCmd(t, newAcctCmdWith(testAcctEnv(tc.env)), append([]string{"--ledger", path}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if out != tc.want {
				t.Fatalf("output:\n%q\nwant:\n%q", out, tc.want)
			}
		})
	}
}

// TestAcctJSON: sacct --json prints slurmdbd's v0.0.44 jobs answer
// (valid against slurmrestd's document, as GET /slurmdb/v0.0.44/jobs/
// answers it): each allocation with its steps nested.
func TestAcctJSON(t *testing.T) {
	path := testLedger(t)
	for _, flag := range []string{"--json", "--json=v0.0.44"} {
		out, err := runAcctCmd(t, newAcctCmdWith(testAcctEnv(nil)), "--ledger", path, flag, "-u", "alice")
		if err != nil {
			t.Fatal(err)
		}
		doc, err := openapi3.NewLoader().LoadFromFile("../../scheduler/rest/contract/slurm-openapi-v0.0.44.json")
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		if err := doc.Components.Schemas["v0.0.44_openapi_slurmdbd_jobs_resp"].Value.VisitJSON(v, openapi3.MultiErrors()); err != nil {
			t.Fatalf("sacct %s breaks v0.0.44_openapi_slurmdbd_jobs_resp: %v\n%s", flag, err, out)
		}
		var js struct {
			Jobs []struct {
				JobID int64 `json:"job_id"`
				User  string
				Steps []struct {
					Step struct{ ID string }
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &js); err != nil {
			t.Fatal(err)
		}
		if len(js.Jobs) != 1 || js.Jobs[0].JobID != 10 || js.Jobs[0].User != "alice" || len(js.Jobs[0].Steps) != 1 || js.Jobs[0].Steps[0].Step.ID == "" {
			t.Fatalf("sacct %s = %+v", flag, js)
		}
	}
}

// Bad input is rejected with a message naming the flag and the value.
func TestAcctBadInput(t *testing.T) {
	path := testLedger(t)
	tests := []struct {
		args    []string
		env     map[string]string
		mention []string
	}{
		{[]string{"--format", "JobID,Nope"}, nil, []string{`Invalid field requested: "Nope"`}},
		{[]string{"--format", "JobID,WorkDir"}, nil, []string{"--format", `"WorkDir"`, "not recorded"}},
		{[]string{"-o", "JobID%abc"}, nil, []string{"--format", `"abc"`}},
		{nil, map[string]string{"SACCT_FORMAT": "Bogus"}, []string{`Invalid field requested: "Bogus"`}},
		{[]string{"-S", "yesterday-ish"}, nil, []string{"--starttime", `"yesterday-ish"`}},
		{[]string{"-E", "2024-02-30"}, nil, []string{"--endtime", `"2024-02-30"`}},
		{[]string{"-S", "2024-03-10", "-E", "2024-03-01"}, nil, []string{"--endtime", "before --starttime"}},
		{[]string{"-s", "runing"}, nil, []string{"--state", `"runing"`}},
		{[]string{"-j", "12.x"}, nil, []string{"--jobs", `"12.x"`}},
		{[]string{"-u", "alice,,bob"}, nil, []string{"--user", "empty element"}},
		{[]string{"--json=v9"}, nil, []string{"--json", "v9"}},
		{[]string{"--ledger", filepath.Join(t.TempDir(), "none.db")}, nil, []string{"--ledger", "not found"}},
	}
	for _, tc := range tests {
		_, err := runAcctCmd(t, newAcctCmdWith(testAcctEnv(tc.env)), append([]string{"--ledger", path}, tc.args...)...)
		if err == nil {
			t.Errorf("%v accepted", tc.args)
			continue
		}
		for _, m := range tc.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%v: error %q does not mention %s", tc.args, err, m)
			}
		}
	}
}

func TestAcctHelpFormat(t *testing.T) {
	out, err := runAcctCmd(t, newAcctCmdWith(testAcctEnv(nil)), "--helpformat")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"JobID", "JobIDRaw", "AllocTRES", "ReqTRES", "Elapsed", "NodeList", "Submit", "GPUUUIDs"} {
		if !strings.Contains(out, f) {
			t.Errorf("--helpformat lacks %s:\n%s", f, out)
		}
	}
	if newAcctCmd().Name() != "acct" {
		t.Error("newAcctCmd is not the acct verb")
	}
}

// Under the sacct name an unknown field is refused in Slurm's words and
// exit status (testdata of scheduler/accounting: slurm2205_format.txt).
func TestSacctUnknownFieldAsSlurm(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"/usr/bin/sacct", "--ledger", testLedger(t), "--format=Foo"}, &stdout, &stderr)
	if want := "sacct: error: Invalid field requested: \"Foo\"\n"; code != 1 || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; Slurm exits 1 with %q", code, stderr.String(), want)
	}
}
