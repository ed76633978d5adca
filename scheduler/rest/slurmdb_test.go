package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/scheduler/store"
)

var day = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

// ledgerLines are four finished jobs over four days, the first with a
// batch step and a failed step.
func ledgerLines(tb testing.TB) []accounting.JobRecord {
	tb.Helper()
	tr := func(s string) accounting.TRES {
		t, err := accounting.ParseTRES(s)
		if err != nil {
			tb.Fatal(err)
		}
		return t
	}
	job := func(id uint64, user, acct string, d int, state accounting.JobState, code, sig int) accounting.JobRecord {
		start := day.AddDate(0, 0, d)
		return accounting.JobRecord{JobID: id, Name: fmt.Sprintf("j%d", id), User: user, Account: acct, Partition: "gpu", QOS: "normal",
			Submit: start.Add(-time.Minute), Eligible: start.Add(-time.Minute), Start: start, End: start.Add(30 * time.Minute),
			State: state, ExitCode: code, ExitSignal: sig, NodeList: "n1", NNodes: 1, Timelimit: time.Hour,
			ReqTRES: tr("cpu=4,mem=1024,node=1,gres/gpu:h100=1"), AllocTRES: tr("cpu=4,mem=1024,node=1,billing=4,gres/gpu=1,gres/gpu:h100=1"),
			Usage: accounting.JobUsage{CPUTime: 90*time.Second + 500*time.Millisecond}}
	}
	batch := job(101, "alice", "physics", 0, accounting.StateCompleted, 0, 0)
	batch.Step = "batch"
	step := job(101, "alice", "physics", 0, accounting.StateFailed, 1, 0)
	step.Step = "0"
	cancelled := job(103, "dave", "bio", 2, accounting.StateCancelled, 0, 9)
	cancelled.CancelledBy = "dave"
	return []accounting.JobRecord{job(101, "alice", "physics", 0, accounting.StateCompleted, 0, 0), batch, step,
		job(102, "bob", "physics", 1, accounting.StateFailed, 2, 0), cancelled, job(104, "alice", "physics", 4, accounting.StateTimeout, 0, 0)}
}

// startLedgerCluster is the lab controller over a real SQLite ledger
// holding ledgerLines.
func startLedgerCluster(t *testing.T) *cluster {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "accounting.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ledgerLines(t) {
		if err := db.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	return startClusterWith(t, func(o *controller.Options) { o.Ledger = db })
}

func jobIDs(a answer) string {
	var ids []string
	for _, j := range rows(a, "jobs") {
		ids = append(ids, fmt.Sprint(j["job_id"]))
	}
	return strings.Join(ids, ",")
}

// TestSlurmDBJobs queries the ledger with sacct's filters through
// /slurmdb/v0.0.44/jobs: a user sees their own jobs, an operator all.
func TestSlurmDBJobs(t *testing.T) {
	c := startLedgerCluster(t)
	alice, op := c.token(t, "alice", auth.RoleUser), c.token(t, "op", auth.RoleUser)
	unix := func(d int) string { return fmt.Sprint(day.AddDate(0, 0, d).Unix()) }
	tests := []struct{ who, tok, query, want string }{
		{"user", alice, "", "101,104"},
		{"user naming another", alice, "?users=bob", ""},
		{"operator", op, "", "101,102,103,104"},
		{"users", op, "?users=bob,dave", "102,103"},
		{"account", op, "?account=bio", "103"},
		{"state code", op, "?state=CD", "101"},
		{"states", op, "?state=FAILED,TIMEOUT", "102,104"},
		{"window", op, "?start_time=" + unix(2) + "&end_time=" + unix(3), "103"},
		{"sacct time form", op, "?start_time=2026-11-04T00:00:00", "104"},
		{"partition", op, "?partition=nosuch", ""},
	}
	for _, tt := range tests {
		a := c.do(t, "GET", "/slurmdb/v0.0.44/jobs/"+tt.query, tt.tok, nil)
		if a.code != http.StatusOK || jobIDs(a) != tt.want {
			t.Errorf("%s %s: %d jobs %q, want %q: %s", tt.who, tt.query, a.code, jobIDs(a), tt.want, a.errorText())
		}
	}
	for query, want := range map[string]string{"?node=n1": "node", "?state=BOGUS": "state", "?start_time=someday": "start_time", "?cluster=other": "cluster"} {
		if a := c.do(t, "GET", "/slurmdb/v0.0.44/jobs/"+query, op, nil); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), want) {
			t.Errorf("%s: %d %s; want 400 naming %s", query, a.code, a.body, want)
		}
	}
}

// TestSlurmDBJob reads one job with its steps, times, TRES and exit codes.
func TestSlurmDBJob(t *testing.T) {
	c := startLedgerCluster(t)
	alice, bob, op := c.token(t, "alice", auth.RoleUser), c.token(t, "bob", auth.RoleUser), c.token(t, "op", auth.RoleUser)
	a := c.do(t, "GET", "/slurmdb/v0.0.44/job/101", alice, nil)
	js := rows(a, "jobs")
	if a.code != http.StatusOK || len(js) != 1 {
		t.Fatalf("job 101: %d %s", a.code, a.body)
	}
	j := js[0]
	tm := j["time"].(map[string]any)
	if j["user"] != "alice" || j["account"] != "physics" || tm["elapsed"] != 1800.0 || tm["start"] != float64(day.Unix()) ||
		tm["limit"].(map[string]any)["number"] != 60.0 || tm["total"].(map[string]any)["seconds"] != 90.0 {
		t.Errorf("job 101: user %v account %v time %v", j["user"], j["account"], tm)
	}
	if s := j["state"].(map[string]any)["current"]; fmt.Sprint(s) != "[COMPLETED]" {
		t.Errorf("state %v", s)
	}
	var req []string
	for _, r := range j["tres"].(map[string]any)["requested"].([]any) {
		m := r.(map[string]any)
		req = append(req, fmt.Sprintf("%v/%v=%v#%v", m["type"], m["name"], m["count"], m["id"]))
	}
	if want := []string{"cpu/<nil>=4#1", "gres/gpu:h100=1#1002", "mem/<nil>=1024#2", "node/<nil>=1#4"}; !slices.Equal(req, want) {
		t.Errorf("tres requested %v, want %v", req, want)
	}
	var steps []string
	for _, s := range j["steps"].([]any) {
		m := s.(map[string]any)
		steps = append(steps, fmt.Sprintf("%v:%v:%v", m["step"].(map[string]any)["id"], m["state"].([]any)[0], m["exit_code"].(map[string]any)["status"].([]any)[0]))
	}
	if want := []string{"101.batch:COMPLETED:SUCCESS", "101.0:FAILED:ERROR"}; !slices.Equal(steps, want) {
		t.Errorf("steps %v, want %v", steps, want)
	}
	if a := c.do(t, "GET", "/slurmdb/v0.0.44/job/101", bob, nil); a.code != http.StatusOK || jobIDs(a) != "" {
		t.Errorf("another user's job: %d %s", a.code, a.body)
	}
	j = rows(c.do(t, "GET", "/slurmdb/v0.0.44/job/103", op, nil), "jobs")[0]
	ex := j["exit_code"].(map[string]any)
	if j["kill_request_user"] != "dave" || fmt.Sprint(ex["status"]) != "[SIGNALED]" || ex["signal"].(map[string]any)["name"] != "KILL" {
		t.Errorf("cancelled job: kill_request_user %v exit %v", j["kill_request_user"], ex)
	}
	if a := c.do(t, "GET", "/slurmdb/v0.0.44/job/x1", op, nil); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), `job_id="x1"`) {
		t.Errorf("bad job id: %d %s", a.code, a.body)
	}
}

func names(a answer, key, field string) string {
	var out []string
	for _, r := range rows(a, key) {
		out = append(out, fmt.Sprint(r[field]))
	}
	return strings.Join(out, ",")
}

// TestSlurmDBRecords reads the records slurmdbd keeps that Parity's
// cluster file holds: accounts, associations, users, QOS, TRES, the
// cluster, their dump (config), and the ledger's ping and diag.
func TestSlurmDBRecords(t *testing.T) {
	c := startLedgerCluster(t)
	alice, op := c.token(t, "alice", auth.RoleUser), c.token(t, "op", auth.RoleUser)
	const db = "/slurmdb/v0.0.44/"
	assocKey := func(a answer) string {
		var out []string
		for _, r := range rows(a, "associations") {
			out = append(out, fmt.Sprintf("%v/%v", r["account"], r["user"]))
		}
		return strings.Join(out, " ")
	}
	tests := []struct {
		name, tok, path string
		got             func(answer) string
		want            string
	}{
		{"accounts", alice, "accounts/", func(a answer) string {
			return names(a, "accounts", "name") + " " + names(a, "accounts", "organization")
		}, "physics,bio physics,bio"},
		{"one account", alice, "account/bio", func(a answer) string { return names(a, "accounts", "name") }, "bio"},
		{"user's associations", alice, "associations/", assocKey, "root/ physics/ physics/alice bio/"},
		{"operator's associations", op, "associations/", assocKey, "root/ physics/ physics/alice physics/bob bio/ bio/dave"},
		{"associations by account", op, "association/?account=bio", assocKey, "bio/ bio/dave"},
		{"user sees themselves", alice, "users/", func(a answer) string { return names(a, "users", "name") }, "alice"},
		{"operator sees all", op, "users/", func(a answer) string {
			return names(a, "users", "name") + " " + names(a, "users", "administrator_level")
		}, "alice,bob,dave,root,op [None],[None],[None],[Administrator],[Operator]"},
		{"qos", alice, "qos/", func(a answer) string { return names(a, "qos", "name") }, "normal,high"},
		{"one qos", alice, "qos/high", func(a answer) string { return fmt.Sprint(rows(a, "qos")[0]["priority"].(map[string]any)["number"]) }, "100"},
		{"tres", alice, "tres/", func(a answer) string {
			var out []string
			for _, r := range rows(a, "TRES") {
				if r["count"] != 0.0 {
					out = append(out, fmt.Sprintf("%v/%v=%v", r["type"], r["name"], r["count"]))
				}
			}
			return strings.Join(out, " ")
		}, "cpu/<nil>=32 mem/<nil>=131072 node/<nil>=2 billing/<nil>=32 gres/gpu=8 gres/gpu:h100=8"},
		{"clusters", alice, "clusters/", func(a answer) string { return names(a, "clusters", "name") + " " + names(a, "clusters", "nodes") }, "lab n[1-2]"},
		{"one cluster", alice, "cluster/lab", func(a answer) string { return names(a, "clusters", "name") }, "lab"},
		{"config", op, "config", func(a answer) string {
			return fmt.Sprint(len(rows(a, "accounts")), len(rows(a, "users")), len(rows(a, "qos")), len(rows(a, "associations")), len(rows(a, "clusters")))
		}, "2 5 2 6 1"},
		{"ping", alice, "ping/", func(a answer) string { return fmt.Sprint(rows(a, "pings")[0]["responding"]) }, "true"},
		{"diag", alice, "diag/", func(a answer) string {
			return fmt.Sprint(a.obj["statistics"].(map[string]any)["time_start"].(float64) > 0)
		}, "true"},
	}
	for _, tt := range tests {
		a := c.do(t, "GET", db+tt.path, tt.tok, nil)
		if a.code != http.StatusOK {
			t.Errorf("%s: %d %s", tt.name, a.code, a.body)
			continue
		}
		if got := tt.got(a); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	for path, want := range map[string]string{"account/nosuch": "nosuch", "qos/nosuch": "nosuch", "cluster/other": "other", "user/bob": "bob"} {
		if a := c.do(t, "GET", db+path, alice, nil); a.code != http.StatusNotFound || !strings.Contains(a.errorText(), want) {
			t.Errorf("%s: %d %s; want 404 naming %s", path, a.code, a.body, want)
		}
	}
}

// TestSlurmDBWithoutLedger: a controller that keeps no ledger says so.
func TestSlurmDBWithoutLedger(t *testing.T) {
	c := startCluster(t)
	op := c.token(t, "op", auth.RoleUser)
	if a := c.do(t, "GET", "/slurmdb/v0.0.44/jobs/", op, nil); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), "keeps no accounting ledger") {
		t.Errorf("jobs: %d %s", a.code, a.body)
	}
	a := c.do(t, "GET", "/slurmdb/v0.0.44/ping/", op, nil)
	if a.code != http.StatusOK || rows(a, "pings")[0]["responding"] != false || !strings.Contains(string(a.body), "keeps no accounting ledger") {
		t.Errorf("ping: %d %s", a.code, a.body)
	}
}
