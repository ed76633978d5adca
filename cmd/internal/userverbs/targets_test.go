package userverbs

import (
	"slices"
	"strings"
	"testing"
)

func TestJobTargetList(t *testing.T) {
	tests := []struct {
		words []string
		want  []string
		err   string
	}{
		{words: []string{"12,13", "7"}, want: []string{"12", "13", "7"}},
		{words: []string{"20_3"}, want: []string{"20_3"}},
		{words: []string{"12,20_[1,3-4],9"}, want: []string{"12", "20_1", "20_3", "20_4", "9"}},
		{words: []string{"20_[1-"}, err: `"20_[1-"`},
		{words: []string{"20_x"}, err: `"20_x"`},
		{words: []string{"abc"}, err: `invalid job id "abc"`},
		{words: []string{"20_[0-99999]"}, err: "at most 4096"},
	}
	for _, tt := range tests {
		got, err := jobTargetList(tt.words)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("jobTargetList(%q) error = %v, want %q", tt.words, err, tt.err)
			}
			continue
		}
		var names []string
		for _, g := range got {
			names = append(names, g.String())
		}
		if err != nil || !slices.Equal(names, tt.want) {
			t.Errorf("jobTargetList(%q) = %q, %v; want %q", tt.words, names, err, tt.want)
		}
	}
}

// TestArrayTaskIDsInVerbs: hold, release, update, show job and squeue -j
// take 1_3 as scancel does.
func TestArrayTaskIDsInVerbs(t *testing.T) {
	cl := startCLICluster(t)
	alice := cl.as("alice", nil)
	cl.ok(alice, "sbatch", "--array=1-9%2", "--wrap", "x")
	// Rows sorted by name: squeue orders by job id, and a task still in
	// the array carries the array's.
	queue := func(argv ...string) []string {
		return slices.Sorted(slices.Values(rows(cl.ok(alice, append(argv, "-o", "%i %T")...))))
	}
	held := func(id string) string { _, h := holdOf(t, cl, alice, id); return h }

	cl.ok(alice, "scontrol", "hold", "1_3")
	if got := queue("squeue", "-j", "1_3"); !slices.Equal(got, []string{"1_3 PENDING"}) || held("1_3") != "user" {
		t.Errorf("squeue -j 1_3 after hold = %q (hold %q)", got, held("1_3"))
	}
	if got := queue("parity", "queue", "-j", "1_[3-4]"); !slices.Equal(got, []string{"1_3 PENDING", "1_4 PENDING"}) {
		t.Errorf("parity queue -j 1_[3-4] = %q", got)
	}
	rec := record(cl.ok(alice, "scontrol", "show", "job", "1_4"))
	if rec["ArrayJobId"] != "1" || rec["ArrayTaskId"] != "4" || rec["JobState"] != "PENDING" {
		t.Errorf("show job 1_4: %v", rec)
	}
	cl.ok(alice, "scontrol", "update", "JobId=1_4", "Nice=7")
	if rec := record(cl.ok(alice, "parity", "show", "job", "1_4")); rec["Nice"] != "7" || rec["ArrayTaskId"] != "4" || rec["JobId"] == "1" {
		t.Errorf("show job 1_4 after update: %v", rec)
	}
	cl.ok(alice, "parity", "release", "1_3")
	cl.ok(alice, "parity", "hold", "1_[5-6]")
	if got := queue("squeue", "-j", "1_3,1_[5-6]"); !slices.Equal(got, []string{"1_3 PENDING", "1_5 PENDING", "1_6 PENDING"}) {
		t.Errorf("squeue -j 1_3,1_[5-6] = %q", got)
	}
	if h3, h5, h6 := held("1_3"), held("1_5"), held("1_6"); h3 != "" || h5 != "user" || h6 != "user" {
		t.Errorf("holds after release 1_3 and hold 1_[5-6]: %q %q %q", h3, h5, h6)
	}
	cl.fails(alice, 1, []string{"scontrol", "hold", "1_99"}, "scontrol: error: job 1_99: invalid job id specified: 1_99")
	cl.fails(alice, 1, []string{"squeue", "-j", "1_[x"}, `"1_[x"`)
}
