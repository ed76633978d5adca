package format

import (
	"slices"
	"strings"
	"testing"
)

func sinfo(t *testing.T, layout string, o SinfoOptions) []string {
	t.Helper()
	l, err := ParseSinfoFormat(layout)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Sinfo(&b, testPartitions(), testNodes(), l, o); err != nil {
		t.Fatal(err)
	}
	return lines(b.String())
}

func TestSinfoDefault(t *testing.T) {
	out := sinfo(t, SinfoDefault, SinfoOptions{Env: env, ShowEmpty: true})
	mustEqual(t, "header", out[0], "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST")
	want := [][]string{
		{"gpu*", "up", "2-00:00:00", "2", "mix", "n[001-002]"},
		{"gpu*", "up", "2-00:00:00", "1", "drain", "n003"},
		{"gpu*", "up", "2-00:00:00", "1", "idle", "n004"},
		{"debug", "up", "30:00", "1", "drain", "n003"},
		{"debug", "up", "30:00", "1", "idle", "n004"},
		{"cpu", "down", "infinite", "1", "unk*", "c1"},
		{"empty", "up", "infinite", "0", "n/a"},
	}
	if len(out) != len(want)+1 {
		t.Fatalf("got:\n%s", strings.Join(out, "\n"))
	}
	for i, w := range want {
		if got := cells(out[i+1]); !slices.Equal(got, w) {
			t.Errorf("row %d = %q, want %q", i, got, w)
		}
	}
	// The partition column is as wide as its header; AVAIL is right-justified.
	mustEqual(t, "first row", out[1][:16], "gpu*         up ")
}

func TestSinfoVariants(t *testing.T) {
	cases := []struct {
		name   string
		layout string
		o      SinfoOptions
		want   []string // rows after the header, cells joined by one space
	}{
		{"node oriented", SinfoNodes, SinfoOptions{PerNode: true}, []string{
			"n001 1 gpu* mix", "n002 1 gpu* mix", "n003 1 gpu* drain", "n004 1 gpu* idle",
			"n003 1 debug drain", "n004 1 debug idle", "c1 1 cpu unk*"}},
		{"reasons", SinfoReasons, SinfoOptions{ReasonsOnly: true}, []string{"bad fan olga 2025-06-02T08:00:00 n003"}},
		{"summary", SinfoSummary, SinfoOptions{}, []string{"gpu* up 2-00:00:00 2/1/1/4 n[001-004]", "debug up 30:00 0/1/1/2 n[003-004]", "cpu down infinite 0/0/1/1 c1"}},
		{"cpus and gres", "%R %C %G %T", SinfoOptions{}, []string{"gpu 32/96/0/128 gpu:h100:4 MIXED", "gpu 0/0/64/64 gpu:h100:4 DRAINED",
			"gpu 0/64/0/64 gpu:h100:4 IDLE", "debug 0/0/64/64 gpu:h100:4 DRAINED", "debug 0/64/0/64 gpu:h100:4 IDLE", "cpu 0/0/32/32 (null) UNKNOWN*"}},
		{"grouping follows the printed fields", "%R %D %c %f", SinfoOptions{}, []string{"gpu 4 64 h100,nvlink", "debug 2 64 h100,nvlink", "cpu 1 32 (null)"}},
		{"state filter", "%N %t", SinfoOptions{}, []string{"n[001-002] mix", "n003 drain", "n004 idle", "c1 unk*"}},
	}
	for _, c := range cases {
		out := sinfo(t, c.layout, c.o)
		var got []string
		for _, l := range out[1:] {
			got = append(got, strings.Join(cells(l), " "))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestNodeStates(t *testing.T) {
	nodes := testNodes()
	cases := []struct {
		n                  int
		short, long, full  string
		matches, nomatches []string
	}{
		{0, "mix", "MIXED", "MIXED", []string{"mix", "MIXED"}, []string{"idle", "drain"}},
		{2, "drain", "DRAINED", "IDLE+DRAIN", []string{"drain", "DRAINED", "idle"}, []string{"mix", "~drain"}},
		{4, "unk*", "UNKNOWN*", "UNKNOWN+NOT_RESPONDING", []string{"unk", "NO_RESPOND", "~idle"}, []string{"idle"}},
	}
	for _, c := range cases {
		n := nodes[c.n]
		n.DisplayState = "" // derive from state and flags
		mustEqual(t, n.GetName()+" short", NodeState(n), c.short)
		mustEqual(t, n.GetName()+" long", NodeStateLong(n), c.long)
		mustEqual(t, n.GetName()+" full", NodeStateFull(n), c.full)
		for _, m := range c.matches {
			if !NodeMatchesState(n, []string{m}) {
				t.Errorf("%s should match -t %s", n.GetName(), m)
			}
		}
		for _, m := range c.nomatches {
			if NodeMatchesState(n, []string{m}) {
				t.Errorf("%s should not match -t %s", n.GetName(), m)
			}
		}
	}
	busy := nodes[0]
	busy.Flags = []string{"DRAIN"}
	busy.DisplayState = ""
	mustEqual(t, "draining", NodeState(busy), "drng")
	mustEqual(t, "draining long", NodeStateLong(busy), "DRAINING")
}

func TestGPUsView(t *testing.T) {
	l, err := ParseGPUFormat(GPULayout)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := GPUs(&b, testNodes()[:1], l, false); err != nil {
		t.Fatal(err)
	}
	out := lines(b.String())
	mustEqual(t, "header", strings.Join(cells(out[0]), " "), "NODE IDX TYPE STATE JOBID UUID REASON")
	mustEqual(t, "alloc gpu", strings.Join(cells(out[1]), " "), "n001 0 h100 alloc 7 GPU-1a")
	mustEqual(t, "drained gpu", strings.Join(cells(out[4]), " "), "n001 3 h100 drain - GPU-1d xid 79")
	mustEqual(t, "rows", len(out), 5)
}
