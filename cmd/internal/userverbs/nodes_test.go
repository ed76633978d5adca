package userverbs

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// sinfo's layouts line up as Slurm 22.05's do; -l prints the time first.
func TestNodesSlurmLayouts(t *testing.T) {
	cl := startCLICluster(t)
	cl.register("n1", 4)
	alice := cl.as("alice", nil)
	cases := []struct {
		argv []string
		want []string
	}{
		{[]string{"sinfo", "-N"}, []string{
			"NODELIST   NODES PARTITION STATE",
			"n1             1      gpu* idle",
			"n1             1     debug idle",
			"n2             1      gpu* unk*"}},
		// S:C:T falls back to Slurm's CPUs-only default: listings carry no
		// inventory; n2 never registered, so nothing is known of it.
		{[]string{"sinfo", "-N", "-l"}, []string{
			"Mon Jun  2 09:00:00 2025",
			"NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON",
			"n1             1      gpu*        idle 16     1:16:1  65536        0      1     h100 none",
			"n1             1     debug        idle 16     1:16:1  65536        0      1     h100 none",
			"n2             1      gpu*    unknown* 0         N/A      0        0      1     h100 none"}},
		{[]string{"sinfo", "-l", "-p", "debug"}, []string{
			"Mon Jun  2 09:00:00 2025",
			"PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST",
			"debug        up      30:00 1-infinite   no       NO        all      1        idle n1"}},
		{[]string{"sinfo", "-h", "-l", "-p", "debug"}, []string{
			"debug        up      30:00 1-infinite   no       NO        all      1        idle n1"}},
		{[]string{"sinfo", "-o", "%P %T", "-p", "debug"}, []string{"PARTITION STATE", "debug idle"}},
	}
	for _, c := range cases {
		got := strings.Split(strings.TrimSuffix(cl.ok(alice, c.argv...), "\n"), "\n")
		if !slices.Equal(got, c.want) {
			t.Errorf("%q:\n got %q\nwant %q", c.argv, got, c.want)
		}
	}
}

func TestNodesDrainAndGPUs(t *testing.T) {
	cl := startCLICluster(t)
	cl.register("n1", 4)
	alice, olga := cl.as("alice", nil), cl.as("olga", nil)

	out := cl.ok(alice, "sinfo")
	if h := strings.SplitN(out, "\n", 2)[0]; h != "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST" {
		t.Errorf("sinfo header = %q", h)
	}
	// Within a partition by Slurm's state number, highest first: the
	// unregistered node is UNKNOWN+NOT_RESPONDING (0x800), idle is 2.
	want := []string{"gpu* up 1-00:00:00 1 unk* n2", "gpu* up 1-00:00:00 1 idle n1", "debug up 30:00 1 idle n1"}
	if got := rows(out); !slices.Equal(got, want) {
		t.Errorf("sinfo:\n got %q\nwant %q", got, want)
	}
	// -N: by node name, a node's partitions in their order.
	if got := rows(cl.ok(alice, "parity", "nodes", "-N")); !slices.Equal(got, []string{"n1 1 gpu* idle", "n1 1 debug idle", "n2 1 gpu* unk*"}) {
		t.Errorf("nodes -N = %q", got)
	}
	if got := rows(cl.ok(alice, "sinfo", "-p", "debug", "-o", "%P %G %c")); !slices.Equal(got, []string{"debug gpu:h100:4 16"}) {
		t.Errorf("sinfo -p debug -o = %q", got)
	}

	// Draining needs an operator; the reason is required and kept.
	cl.fails(alice, 1, []string{"scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=bad fan"},
		"scontrol: error: access/permission denied", "hint: your token's role does not allow this")
	cl.fails(olga, 1, []string{"scontrol", "update", "NodeName=n1", "State=DRAIN"}, "scontrol: error: you must specify a reason")
	cl.ok(olga, "scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=bad fan")
	reasons := rows(cl.ok(alice, "sinfo", "-R"))
	if len(reasons) != 1 || !strings.HasPrefix(reasons[0], "bad fan olga ") || !strings.HasSuffix(reasons[0], " n1") {
		t.Errorf("sinfo -R = %q", reasons)
	}
	if got := rows(cl.ok(alice, "sinfo", "-t", "drain", "-o", "%P %t %N")); !slices.Equal(got, []string{"gpu* drain n1", "debug drain n1"}) {
		t.Errorf("sinfo -t drain = %q", got)
	}
	rec := record(cl.ok(alice, "scontrol", "show", "node", "n1"))
	if rec["State"] != "IDLE+DRAIN" || !strings.HasPrefix(rec["Reason"], "bad fan [olga@") || rec["Gres"] != "gpu:h100:4" || rec["Partitions"] != "gpu,debug" {
		t.Errorf("show node n1 = %v", rec)
	}
	cl.ok(olga, "parity", "update", "NodeName=n1", "State=RESUME")
	if got := rows(cl.ok(alice, "sinfo", "-R")); len(got) != 0 {
		t.Errorf("after resume, sinfo -R = %q", got)
	}

	// One GPU drained: the node keeps working, the GPU view says which.
	cl.ok(olga, "scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=xid 79", "Devices=2")
	gpus := rows(cl.ok(alice, "parity", "nodes", "--gpus"))
	wantGPUs := []string{"n1 0 h100 idle - GPU-n1-0", "n1 1 h100 idle - GPU-n1-1", "n1 2 h100 drain - GPU-n1-2 xid 79", "n1 3 h100 idle - GPU-n1-3"}
	if !slices.Equal(gpus, wantGPUs) {
		t.Errorf("nodes --gpus:\n got %q\nwant %q", gpus, wantGPUs)
	}
	rec = record(cl.ok(alice, "parity", "show", "node", "n1"))
	if rec["GresDrain"] != "gpu:h100:1(IDX:2)" || strings.Contains(rec["State"], "DRAIN") {
		t.Errorf("per-GPU drain: GresDrain=%q State=%q", rec["GresDrain"], rec["State"])
	}

	// --json: GET nodes' v0.0.44 objects, the drained GPU counted.
	var js struct {
		Nodes []struct {
			Name        string `json:"name"`
			GresDrained string `json:"gres_drained"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(cl.ok(alice, "parity", "nodes", "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Nodes) != 2 || js.Nodes[0].Name != "n1" || js.Nodes[0].GresDrained != "gpu:h100:1" {
		t.Errorf("nodes --json = %+v", js)
	}
	cl.fails(alice, 1, []string{"sinfo", "-p", "nosuch"}, "sinfo: error: --partition: no partition named")
	cl.fails(alice, 1, []string{"sinfo", "-o", "%P %Q"}, "sinfo: error: format", "%Q")
	cl.fails(alice, 1, []string{"sinfo", "-n", "n[1-"}, "sinfo: error: --nodes:")
	cl.fails(alice, 1, []string{"scontrol", "show", "node", "n9"}, "node")
}
