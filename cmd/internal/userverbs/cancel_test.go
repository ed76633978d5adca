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
	cl.fails(alice, 1, []string{"scancel", "1"}, "parity: cancel: job 1: job 1: job/step already completing or completed")
	cl.ok(alice, "scancel", "-Q", "1") // -Q: already-ended jobs are not an error
	cl.fails(alice, 1, []string{"scancel"}, "parity: cancel: no job identification provided")
	cl.fails(alice, 1, []string{"scancel", "--signal=B:USR1", "2"}, "parity: cancel: --signal=\"B:USR1\"")
	cl.fails(alice, 1, []string{"scancel", "-s", "WINCH2", "2"}, "unknown signal")
	cl.fails(alice, 1, []string{"scancel", "-s", "USR1", "2"}, "parity: cancel: job 2: job 2 is PENDING; only running jobs take signals")

	// Filters: alice's -n b cancels her two b jobs, not bob's.
	_, errs, code := runCLI(alice, "scancel", "-v", "-n", "b")
	if code != 0 || !strings.Contains(errs, "Terminating job 2") || !strings.Contains(errs, "Terminating job 3") {
		t.Errorf("scancel -n b: exit %d, %q", code, errs)
	}
	if state("2") != "CANCELLED" || state("3") != "CANCELLED" || state("4") != "PENDING" {
		t.Errorf("after scancel -n b: %s %s %s", state("2"), state("3"), state("4"))
	}
	cl.fails(alice, 1, []string{"scancel", "4"}, "access/permission denied")
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
