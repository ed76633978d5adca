package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
)

const exportBase = `# the site's file
cluster: lab
admins: [root]
partitions:
  - name: gpu
    nodes: n[1-2]
    default: true
    maxTime: 1-00:00:00
nodes:
  - names: n[1-2]
    gpus: 4
    gpuType: h100   # kept as written
accounts:
  - name: physics
    users: [alice]
qos:
  - name: high
    priority: 10
priority:
  weights: {fairshare: 1000, age: 10}
`

// Export writes the run-time partitions, accounts and QOS over the base
// file: parsing the result gives exactly that state, and the rest of
// the file (comments included) as it was.
func TestExportRoundTrips(t *testing.T) {
	base, err := Parse("base.yaml", []byte(exportBase))
	if err != nil {
		t.Fatal(err)
	}
	cur := *base
	wall := func(s string) (time.Duration, error) { d, _, err := ParseDuration(s); return d, err }
	lim, err := policy.ParseLimitSet("MaxJobs=4 GrpTRES=gres/gpu=8,mem=64G MaxWall=02:00:00", wall)
	if err != nil {
		t.Fatal(err)
	}
	cur.Partitions = append(cur.Partitions[:1:1], Partition{Name: "short", Nodes: "n1", NodeNames: []string{"n1"}, MaxTime: 30 * time.Minute,
		DefaultTime: 90 * time.Second, PriorityTier: 2, PriorityJobFactor: 5, DefMemPerCPU: 2048, State: "DRAIN", AllowAccounts: []string{"hep"},
		DenyQOS: []string{"high"}, OverSubscribe: "EXCLUSIVE", BillingWeights: "CPU=1.0,GRES/gpu=2.0"},
		Partition{Name: "off", Nodes: "n2", NodeNames: []string{"n2"}, PriorityTier: 1, PriorityJobFactor: 1, State: "INACTIVE", Down: true})
	cur.Accounts = []Account{{Name: "physics", Shares: 40, Description: "Physics", Users: []User{{Name: "alice", Shares: 2}, {Name: "bob", SharesParent: true}}},
		{Name: "hep", Parent: "physics", Shares: 1, Limits: lim, Users: []User{{Name: "bob", Default: true}}}}
	q := policy.LimitSet{MaxJobs: 2, MaxWall: time.Hour}
	cur.QOS = []QOS{{Name: "high", Priority: 20, Preempt: []string{"normal"}, PreemptMode: "requeue", GraceTime: 45 * time.Second, Limits: q, DenyOnLimit: true},
		{Name: DefaultQOS}}
	out, err := Export([]byte(exportBase), &cur)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse("export.yaml", out)
	if err != nil {
		t.Fatalf("the exported file does not parse: %v\n%s", err, out)
	}
	for name, pair := range map[string][2]any{"partitions": {got.Partitions, cur.Partitions}, "accounts": {got.Accounts, cur.Accounts},
		"qos": {got.QOS, cur.QOS}, "priority": {got.Priority, base.Priority}, "nodes": {got.NodeSets, base.NodeSets}, "admins": {got.Admins, base.Admins}} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s after the round trip:\n%+v\nwant\n%+v\n%s", name, pair[0], pair[1], out)
		}
	}
	if got.Limits == nil {
		t.Error("the exported limits built no limiter")
	}
	for _, kept := range []string{"# the site's file", "# kept as written"} {
		if !strings.Contains(string(out), kept) {
			t.Errorf("the comment %q was lost:\n%s", kept, out)
		}
	}
}
