package userverbs

import (
	"encoding/json"
	"os/user"
	"strings"
	"testing"
)

func TestSystemUsers(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Skip("no current user:", err)
	}
	users := systemUsers()
	ids, ok := users(me.Username)
	if !ok || ids.UID != me.Uid || ids.GID != me.Gid {
		t.Errorf("systemUsers(%q) = %+v, %v; want uid %s gid %s", me.Username, ids, ok, me.Uid, me.Gid)
	}
	if g, err := user.LookupGroupId(me.Gid); err == nil && ids.Group != g.Name {
		t.Errorf("group = %q, want %q", ids.Group, g.Name)
	}
	if _, ok := users("no-such-user-parity-test"); ok {
		t.Error("an unknown user resolved")
	}
}

func TestShowAndUpdateJob(t *testing.T) {
	cl := startCLICluster(t)
	alice, bob, olga := cl.as("alice", nil), cl.as("bob", nil), cl.as("olga", nil)
	cl.ok(alice, "sbatch", "-J", "train", "-N", "1", "--gres=gpu:h100:2", "-o", "out/%x-%j.log", "--wrap", "python train.py")

	rec := record(cl.ok(alice, "scontrol", "show", "job", "1"))
	// UserId and GroupId as Slurm prints them, from this host's user
	// database (alice is usually unknown here: N/A).
	uid, group := "alice(N/A)", "N/A(N/A)"
	if ids, ok := systemUsers()("alice"); ok {
		uid, group = "alice("+ids.UID+")", ids.Group+"("+ids.GID+")"
	}
	for k, v := range map[string]string{"JobId": "1", "JobName": "train", "UserId": uid, "GroupId": group, "MCS_label": "N/A", "Account": "physics", "QOS": "normal",
		"JobState": "PENDING", "Partition": "gpu", "TimeLimit": "01:00:00", "NumNodes": "1-1", "TresPerNode": "gres:gpu:h100:2",
		"StdOut": cl.dir + "/out/train-1.log", "WorkDir": cl.dir, "SubmitTime": "", "NodeList": ""} {
		if v == "" {
			if _, ok := rec[k]; !ok {
				t.Errorf("show job lacks %s", k)
			}
			continue
		}
		if rec[k] != v {
			t.Errorf("show job: %s=%q, want %q", k, rec[k], v)
		}
	}
	if one := cl.ok(alice, "scontrol", "-o", "show", "job", "1"); strings.Count(one, "\n") != 1 || !strings.HasPrefix(one, "JobId=1 JobName=train UserId="+uid+" GroupId="+group+" MCS_label=N/A ") {
		t.Errorf("-o output = %q", one)
	}
	cl.fails(alice, 1, []string{"parity", "show", "job", "99"}, "parity: show: invalid job id specified: 99")
	if rec := record(cl.ok(alice, "parity", "show", "job=1")); rec["JobId"] != "1" {
		t.Errorf("show job=1 = %v", rec)
	}

	// scontrol update as scontrol takes it; parity update is the same.
	cl.ok(alice, "scontrol", "update", "JobId=1", "TimeLimit=30", "Comment=short run")
	cl.ok(alice, "parity", "update", "jobid=1", "TimeLimit=-10")
	cl.ok(olga, "parity", "update", "jobid=1", "TimeLimit=+25")
	rec = record(cl.ok(alice, "parity", "show", "job", "1"))
	if rec["TimeLimit"] != "00:45:00" || rec["Comment"] != "short run" {
		t.Errorf("after update: TimeLimit=%q Comment=%q", rec["TimeLimit"], rec["Comment"])
	}
	cl.fails(alice, 1, []string{"scontrol", "update", "JobId=1", "TimeLimit=+5"}, "scontrol: error: job 1: access/permission denied: only operators may raise a time limit", "hint:")
	cl.ok(olga, "scontrol", "update", "JobId=1", "TimeLimit=2:00:00", "Partition=debug")
	if rec := record(cl.ok(alice, "parity", "show", "job", "1")); rec["Partition"] != "debug" || rec["TimeLimit"] != "02:00:00" {
		t.Errorf("after the operator's update: Partition=%s TimeLimit=%s", rec["Partition"], rec["TimeLimit"])
	}
	cl.fails(alice, 1, []string{"scontrol", "update", "JobId=1", "Partition=nosuch"}, "scontrol: error: job 1: --partition=nosuch: invalid partition name specified")

	// Someone else's job is not theirs to see or change: it is answered
	// as an unknown id is, so the answer does not confirm it exists.
	cl.fails(bob, 1, []string{"scontrol", "show", "job", "1"}, "slurm_load_jobs error: Invalid job id specified")
	cl.fails(bob, 1, []string{"parity", "show", "job", "1"}, "parity: show: invalid job id specified: 1")
	cl.fails(bob, 1, []string{"scontrol", "update", "JobId=1", "Nice=5"}, "scontrol: error: job 1: invalid job id specified: 1")
	// An unknown id: Slurm's bare line under its name, the id under ours.
	cl.fails(alice, 1, []string{"scontrol", "show", "job", "99"}, "slurm_load_jobs error: Invalid job id specified")
	cl.fails(alice, 1, []string{"parity", "show", "job", "99"}, "parity: show: invalid job id specified: 99")

	// show partition / every job; JSON forms.
	rec = record(cl.ok(alice, "scontrol", "show", "partition", "debug"))
	if rec["PartitionName"] != "debug" || rec["MaxTime"] != "00:30:00" || rec["Default"] != "NO" || rec["Nodes"] != "n1" {
		t.Errorf("show partition debug = %v", rec)
	}
	if out := cl.ok(olga, "scontrol", "show", "partitions"); strings.Count(out, "PartitionName=") != 2 {
		t.Errorf("show partitions:\n%s", out)
	}
	cl.fails(alice, 1, []string{"scontrol", "show", "partition", "nosuch"}, "scontrol: error: invalid partition name specified: nosuch")
	var js struct {
		Jobs []struct {
			ID      int    `json:"job_id"`
			Comment string `json:"comment"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(cl.ok(alice, "scontrol", "--json", "show", "job")), &js); err != nil || len(js.Jobs) != 1 ||
		js.Jobs[0].Comment != "short run" {
		t.Errorf("show job --json = %+v, %v", js, err)
	}
}
