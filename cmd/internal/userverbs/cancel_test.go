package userverbs

import (
	"slices"
	"strings"
	"testing"
)

func TestCancel(t *testing.T) {
	cl := startCLICluster(t)
	alice, bob, olga := cl.as("alice", nil), cl.as("bob", nil), cl.as("olga", nil)
	for _, argv := range [][]string{
		{"sbatch", "-J", "a", "--wrap", "x"}, {"sbatch", "-J", "b", "--wrap", "x"}, {"sbatch", "-J", "b", "-p", "debug", "--wrap", "x"},
	} {
		cl.ok(alice, argv...)
	}
	cl.ok(bob, "sbatch", "-J", "b", "--wrap", "x")
	state := func(id string) string { return record(cl.ok(olga, "scontrol", "show", "job", id))["JobState"] }

	if out := cl.ok(alice, "scancel", "1"); out != "" {
		t.Errorf("scancel printed %q", out)
	}
	if state("1") != "CANCELLED" {
		t.Errorf("job 1 is %s", state("1"))
	}
	// As Slurm 22.05's scancel (checked against it): cancelling a job that
	// already ended, or one never known, is no error and says nothing
	// unless -v; a signal to an ended job fails unless -Q.
	for _, argv := range [][]string{{"scancel", "1"}, {"scancel", "99999"}, {"scancel", "-Q", "1"}} {
		if out, errs, code := runCLI(alice, argv...); code != 0 || out != "" || errs != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a silent success", argv, code, out, errs)
		}
	}
	if _, errs, code := runCLI(alice, "scancel", "-v", "1"); code != 0 || !strings.Contains(errs, "scancel: error: job 1: job/step already completing or completed") {
		t.Errorf("scancel -v of an ended job: exit %d, stderr %q; want 0 and the reason", code, errs)
	}
	cl.fails(alice, 1, []string{"scancel", "-s", "USR1", "1"}, "scancel: error: job 1 is CANCELLED; only running jobs take signals")
	cl.ok(alice, "scancel", "-Q", "-s", "USR1", "1")
	cl.fails(alice, 1, []string{"scancel"}, "scancel: error: no job identification provided")
	cl.fails(alice, 1, []string{"scancel", "--signal=B:USR1", "2"}, "scancel: error: --signal=\"B:USR1\"")
	cl.fails(alice, 1, []string{"scancel", "-s", "WINCH2", "2"}, "unknown signal")
	cl.fails(alice, 1, []string{"scancel", "-s", "USR1", "2"}, "scancel: error: job 2 is PENDING; only running jobs take signals")

	// Filters: alice's -n b cancels her two b jobs, not bob's.
	_, errs, code := runCLI(alice, "scancel", "-v", "-n", "b")
	if code != 0 || !strings.Contains(errs, "Terminating job 2") || !strings.Contains(errs, "Terminating job 3") {
		t.Errorf("scancel -n b: exit %d, %q", code, errs)
	}
	if state("2") != "CANCELLED" || state("3") != "CANCELLED" || state("4") != "PENDING" {
		t.Errorf("after scancel -n b: %s %s %s", state("2"), state("3"), state("4"))
	}
	// Bob's job is unknown to alice: no error, as for any unknown id.
	cl.ok(alice, "scancel", "4")
	// An operator cancels by user and partition.
	cl.ok(bob, "sbatch", "-p", "debug", "--wrap", "x")
	cl.ok(olga, "parity", "cancel", "-u", "bob", "-p", "debug", "-t", "PD")
	if state("5") != "CANCELLED" || state("4") != "PENDING" {
		t.Errorf("after cancel -u bob -p debug: 4=%s 5=%s", state("4"), state("5"))
	}
	got := rows(cl.ok(olga, "squeue", "-o", "%i %u %T"))
	if !slices.Equal(got, []string{"4 bob PENDING"}) {
		t.Errorf("queue after cancels = %q", got)
	}
	if ended := rows(cl.ok(olga, "squeue", "-t", "CA", "-o", "%i")); !slices.Equal(ended, []string{"3", "5", "1", "2"}) {
		t.Errorf("squeue -t CA = %q", ended)
	}
}
