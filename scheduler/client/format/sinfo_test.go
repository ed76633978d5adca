package format

import (
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
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
	// Within a partition, Slurm's state number decides, highest first:
	// IDLE+DRAIN (0x202) before MIXED (5) before IDLE (2).
	want := [][]string{
		{"gpu*", "up", "2-00:00:00", "1", "drain", "n003"},
		{"gpu*", "up", "2-00:00:00", "2", "mix", "n[001-002]"},
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
		// -N: by node name alone; a node in two partitions keeps their order.
		{"node oriented", SinfoNodes, SinfoOptions{PerNode: true}, []string{
			"c1 1 cpu unk*", "n001 1 gpu* mix", "n002 1 gpu* mix", "n003 1 gpu* drain", "n003 1 debug drain",
			"n004 1 gpu* idle", "n004 1 debug idle"}},
		{"reasons", SinfoReasons, SinfoOptions{ReasonsOnly: true}, []string{"bad fan olga 2025-06-02T08:00:00 n003"}},
		{"summary", SinfoSummary, SinfoOptions{}, []string{"gpu* up 2-00:00:00 2/1/1/4 n[001-004]", "debug up 30:00 0/1/1/2 n[003-004]", "cpu down infinite 0/0/1/1 c1"}},
		{"cpus and gres", "%R %C %G %T", SinfoOptions{}, []string{"gpu 0/0/64/64 gpu:h100:4 drained", "gpu 32/96/0/128 gpu:h100:4 mixed",
			"gpu 0/64/0/64 gpu:h100:4 idle", "debug 0/0/64/64 gpu:h100:4 drained", "debug 0/64/0/64 gpu:h100:4 idle", "cpu 0/0/32/32 (null) unknown*"}},
		{"grouping follows the printed fields", "%R %D %c %f", SinfoOptions{}, []string{"gpu 4 64 h100,nvlink", "debug 2 64 h100,nvlink", "cpu 1 32 (null)"}},
		// No partition field: every node once, still by state, highest
		// first (UNKNOWN+NOT_RESPONDING is 0x800).
		{"state filter", "%N %t", SinfoOptions{}, []string{"c1 unk*", "n003 drain", "n[001-002] mix", "n004 idle"}},
		{"topology, disk and weight", "%R %z %X %Y %Z %d %w", SinfoOptions{}, []string{"gpu 64:1:1 64 1 1 0 1", "debug 64:1:1 64 1 1 0 1", "cpu 32:1:1 32 1 1 0 1"}},
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
		{0, "mix", "mixed", "MIXED", []string{"mix", "MIXED"}, []string{"idle", "drain"}},
		{2, "drain", "drained", "IDLE+DRAIN", []string{"drain", "DRAINED", "idle"}, []string{"mix", "~drain"}},
		{4, "unk*", "unknown*", "UNKNOWN+NOT_RESPONDING", []string{"unk", "NO_RESPOND", "~idle"}, []string{"idle"}},
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
	mustEqual(t, "draining long", NodeStateLong(busy), "draining")
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

func TestNodeStateLongIsLowerCase(t *testing.T) {
	// sinfo %T as Slurm 22.05 prints it; the suffix stays.
	for display, want := range map[string]string{
		"idle": "idle", "mix": "mixed", "alloc": "allocated", "drain": "drained", "drng": "draining", "down": "down",
		"unk*": "unknown*", "comp": "completing", "resv": "reserved", "maint": "maint", "plnd": "planned",
		"futr": "future", "fail": "fail", "failg": "failing", "inval": "inval", "idle~": "idle~",
	} {
		mustEqual(t, display, NodeStateLong(&pb.Node{DisplayState: display}), want)
	}
	// scontrol's State= keeps Slurm's upper case.
	mustEqual(t, "full", NodeStateFull(&pb.Node{State: "IDLE", Flags: []string{"DRAIN"}}), "IDLE+DRAIN")
}

func TestSlurmNodeState(t *testing.T) {
	cases := []struct {
		name string
		n    *pb.Node
		want int
	}{
		{"unknown", &pb.Node{State: "UNKNOWN"}, 0},
		{"down", &pb.Node{State: "DOWN"}, 1},
		{"idle", &pb.Node{State: "IDLE", Cpus: 16}, 2},
		{"allocated", &pb.Node{State: "ALLOCATED", Cpus: 16, AllocCpus: 16}, 3},
		{"mixed", &pb.Node{State: "MIXED", Cpus: 16, AllocCpus: 4}, 5},
		{"partly allocated counts as mixed", &pb.Node{State: "ALLOCATED", Cpus: 16, AllocCpus: 4}, 5},
		{"future", &pb.Node{State: "FUTURE"}, 6},
		{"drained", &pb.Node{State: "IDLE", Flags: []string{"DRAIN"}}, 0x202},
		{"draining", &pb.Node{State: "MIXED", Flags: []string{"DRAIN"}}, 0x205},
		{"not responding", &pb.Node{State: "IDLE", Flags: []string{"NOT_RESPONDING"}}, 0x802},
		{"unregistered (display state only)", &pb.Node{State: "UNKNOWN", DisplayState: "unk*"}, 0x800},
		{"completing", &pb.Node{State: "ALLOCATED", Flags: []string{"COMPLETING"}}, 0x403},
		{"fail", &pb.Node{State: "IDLE", Flags: []string{"FAIL"}}, 0x2002},
		{"maint", &pb.Node{State: "IDLE", Flags: []string{"MAINT"}}, 0x8002},
		{"reserved", &pb.Node{State: "IDLE", Flags: []string{"RESERVED"}}, 0x22},
		// Above mixed, so sinfo lists a planned group before a mixed one
		// (the anchor's sinfo with a 4-node job planned).
		{"planned", &pb.Node{State: "IDLE", Flags: []string{"PLANNED"}, DisplayState: "plnd"}, 0x200002},
	}
	for _, c := range cases {
		mustEqual(t, c.name, slurmNodeState(c.n), c.want)
	}
}

// slurmCluster is the one the real sinfo output below came from: four
// 16-CPU nodes in partition gpu.
func slurmCluster(states ...*pb.Node) ([]*pb.Partition, []*pb.Node) {
	p := &pb.Partition{Name: "gpu", Default: true, State: "up"}
	for i, n := range states {
		n.Name = "n" + string(rune('1'+i))
		n.Cpus, n.MemoryMb = 16, 64000
		p.NodeNames = append(p.NodeNames, n.GetName())
	}
	return []*pb.Partition{p}, states
}

func render(t *testing.T, parts []*pb.Partition, nodes []*pb.Node, layout string, o SinfoOptions) string {
	t.Helper()
	l, err := ParseSinfoFormat(layout)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Sinfo(&b, parts, nodes, l, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestSinfoMatchesSlurm(t *testing.T) {
	idle := func() *pb.Node { return &pb.Node{State: "IDLE"} }
	mixed := &pb.Node{State: "MIXED", AllocCpus: 4,
		Inventory: &pb.Inventory{Host: &pb.Host{Sockets: 2, Cores: 16, Cpus: "0-15"}}}
	drained := &pb.Node{State: "IDLE", Flags: []string{"DRAIN"}, Reason: "bad fan"}
	planned := func() *pb.Node { return &pb.Node{State: "IDLE", Flags: []string{"PLANNED"}, DisplayState: "plnd"} }
	// Lines as Slurm 22.05 printed them, less their trailing blanks.
	cases := []struct {
		name   string
		nodes  []*pb.Node
		layout string
		o      SinfoOptions
		want   string
	}{
		{"default", []*pb.Node{idle(), idle(), idle(), idle()}, SinfoDefault, SinfoOptions{}, "" +
			"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
			"gpu*         up   infinite      4   idle n[1-4]\n"},
		{"by state, highest first", []*pb.Node{mixed, idle(), idle(), drained}, SinfoDefault, SinfoOptions{}, "" +
			"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
			"gpu*         up   infinite      1  drain n4\n" +
			"gpu*         up   infinite      1    mix n1\n" +
			"gpu*         up   infinite      2   idle n[2-3]\n"},
		{"planned before mixed", []*pb.Node{mixed, {State: "MIXED", AllocCpus: 1}, planned(), planned()}, SinfoDefault, SinfoOptions{}, "" +
			"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
			"gpu*         up   infinite      2   plnd n[3-4]\n" +
			"gpu*         up   infinite      2    mix n[1-2]\n"},
		{"-N", []*pb.Node{idle()}, SinfoNodes, SinfoOptions{PerNode: true}, "" +
			"NODELIST   NODES PARTITION STATE\n" +
			"n1             1      gpu* idle\n"},
		{"-N -l", []*pb.Node{mixed}, SinfoNodesLong, SinfoOptions{PerNode: true}, "" +
			"NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON\n" +
			"n1             1      gpu*       mixed 16      2:8:1  64000        0      1   (null) none\n"},
		{"-N -l, layout as the controller reports it", []*pb.Node{{State: "MIXED", AllocCpus: 4, Cpus: 16, Sockets: 2, CoresPerSocket: 8, ThreadsPerCore: 1}},
			SinfoNodesLong, SinfoOptions{PerNode: true}, "" +
				"NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON\n" +
				"n1             1      gpu*       mixed 16      2:8:1  64000        0      1   (null) none\n"},
		{"-N -l -h", []*pb.Node{mixed}, SinfoNodesLong, SinfoOptions{PerNode: true, NoHeader: true, Date: true},
			"n1             1      gpu*       mixed 16      2:8:1  64000        0      1   (null) none\n"},
	}
	for _, c := range cases {
		parts, nodes := slurmCluster(c.nodes...)
		if got := render(t, parts, nodes, c.layout, c.o); got != c.want {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
}

func TestSinfoNodeNamesInNaturalOrder(t *testing.T) {
	nodes := []*pb.Node{{Name: "n10", State: "IDLE"}, {Name: "n2", State: "DOWN"}, {Name: "n1", State: "MIXED"}}
	parts := []*pb.Partition{{Name: "a", NodeNames: []string{"n10", "n2", "n1"}}, {Name: "b", NodeNames: []string{"n2"}}}
	got := rows(render(t, parts, nodes, "%N %P %t", SinfoOptions{PerNode: true}))
	want := []string{"n1 a mix", "n2 a down", "n2 b down", "n10 a idle"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, c := range []struct {
		a, b string
		want int
	}{{"n2", "n10", -1}, {"n10", "n10", 0}, {"gpu-b1", "gpu-a2", 1}, {"n", "n1", -1}, {"n010", "n9", 1}} {
		mustEqual(t, c.a+" vs "+c.b, naturalCompare(c.a, c.b), c.want)
	}
}

func rows(out string) []string {
	var r []string
	for _, l := range lines(out)[1:] {
		r = append(r, strings.Join(cells(l), " "))
	}
	return r
}

func TestSinfoLongPrintsTheDate(t *testing.T) {
	parts, nodes := slurmCluster(&pb.Node{State: "IDLE"})
	berlin := time.FixedZone("CET", 3600)
	cases := []struct {
		name string
		o    SinfoOptions
		want string // first line
	}{
		{"-l", SinfoOptions{Env: env, Date: true}, "Mon Jun  2 11:00:00 2025"},
		{"-l in the Env's zone", SinfoOptions{Env: Env{Now: env.Now, Loc: berlin}, Date: true}, "Mon Jun  2 12:00:00 2025"},
		{"without -l", SinfoOptions{Env: env}, "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST"},
		{"-h -l: neither date nor header", SinfoOptions{Env: env, Date: true, NoHeader: true}, "gpu*         up   infinite 1-infinite   no       NO        all      1        idle n1"},
	}
	for _, c := range cases {
		out := lines(render(t, parts, nodes, SinfoLong, c.o))
		mustEqual(t, c.name, out[0], c.want)
	}
}

func TestNodeSCT(t *testing.T) {
	host := func(sockets, cores int32, cpus string) *pb.Inventory {
		return &pb.Inventory{Host: &pb.Host{Sockets: sockets, Cores: cores, Cpus: cpus}}
	}
	cases := []struct {
		name string
		n    *pb.Node
		want string
	}{
		{"inventory", &pb.Node{Cpus: 16, Inventory: host(2, 16, "0-15")}, "2:8:1"},
		{"hyperthreads", &pb.Node{Cpus: 64, Inventory: host(2, 32, "0-63")}, "2:16:2"},
		{"no inventory: Slurm's CPUs-only default", &pb.Node{Cpus: 16}, "16:1:1"},
		{"nothing known", &pb.Node{}, "N/A"},
	}
	for _, c := range cases {
		parts, nodes := []*pb.Partition{{Name: "p", NodeNames: []string{"x"}}}, []*pb.Node{c.n}
		c.n.Name = "x"
		mustEqual(t, c.name, rows(render(t, parts, nodes, "%z", SinfoOptions{}))[0], c.want)
	}
}
