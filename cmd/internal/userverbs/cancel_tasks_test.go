package userverbs

import (
	"slices"
	"testing"
)

func TestCancelArrayTasks(t *testing.T) {
	cl := startCLICluster(t)
	alice := cl.as("alice", nil)
	cl.ok(alice, "sbatch", "--array=1-9%2", "--wrap", "x")
	queue := func() []string { return rows(cl.ok(alice, "squeue", "-o", "%i %F %K %T")) }
	if got := queue(); !slices.Equal(got, []string{"1_[1-9%2] 1 1-9%2 PENDING"}) {
		t.Fatalf("squeue before cancelling = %q", got)
	}
	cl.ok(alice, "scancel", "1_[2-3,5]", "1_9")
	if got := queue(); !slices.Equal(got, []string{"1_[1,4,6-8%2] 1 1,4,6-8%2 PENDING"}) {
		t.Fatalf("squeue after cancelling 2, 3, 5 and 9 = %q", got)
	}
	cl.fails(alice, 1, []string{"scancel", "1_x"}, "invalid job id")
	cl.fails(alice, 1, []string{"scancel", "-s", "USR1", "1_4"}, "array task ids take neither --signal")
	cl.ok(alice, "scancel", "1")
	if got := queue(); len(got) != 0 {
		t.Fatalf("squeue after cancelling the array = %q", got)
	}
}
