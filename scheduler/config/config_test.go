package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/core"
)

func TestMinimal(t *testing.T) {
	c, err := Load("testdata/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "demo" || c.Controller.Listen != DefaultListen || c.Controller.StateDir != DefaultStateDir {
		t.Fatalf("defaults not applied: %+v", c.Controller)
	}
	if c.Auth.KeyFile != DefaultStateDir+"/cluster.key" {
		t.Fatalf("key file %q", c.Auth.KeyFile)
	}
	if !c.DefaultPartition().Default || c.DefaultPartition().Name != "gpu" {
		t.Fatalf("first partition should become the default")
	}
	if got, want := c.NodeNames(), []string{"gpu001", "gpu002", "gpu003", "gpu004"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("nodes %v, want %v", got, want)
	}
	if c.Scheduler.Interval != DefaultInterval || c.NodeDownTimeout != DefaultNodeDownTimeout || !c.RequeueOnNodeFail {
		t.Fatalf("scheduler defaults: %+v, %v", c.Scheduler, c.NodeDownTimeout)
	}
	if !c.HasQOS(DefaultQOS) {
		t.Fatal("the normal QOS should always exist")
	}
	if p := c.DefaultPartition(); p.PriorityTier != 1 || p.PriorityJobFactor != 1 {
		t.Fatalf("partition PriorityTier %d, PriorityJobFactor %d; want slurm.conf's defaults 1 and 1", p.PriorityTier, p.PriorityJobFactor)
	}
	if err := c.CoreConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestFull(t *testing.T) {
	c, err := Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	gpu, _ := c.Partition("gpu")
	if gpu.MaxTime != 48*time.Hour || gpu.DefaultTime != time.Hour || len(gpu.NodeNames) != 128 {
		t.Fatalf("gpu partition: %+v", gpu)
	}
	debug, _ := c.Partition("debug")
	if gpu.PriorityTier != 2 || gpu.PriorityJobFactor != 10 {
		t.Fatalf("gpu partition priority tier %d, job factor %d; want 2, 10 as configured", gpu.PriorityTier, gpu.PriorityJobFactor)
	}
	if debug.MaxTime != 30*time.Minute || len(debug.NodeNames) != 6 || debug.Default {
		t.Fatalf("debug partition: %+v", debug)
	}
	spec := c.NodeSpec("gpu007")
	if spec.CPUs != 128 || spec.MemoryMB != 1<<20 || spec.GPUs != 8 || spec.GPUType != "h100" || !reflect.DeepEqual(spec.Features, []string{"h100", "nvlink"}) {
		t.Fatalf("node spec: %+v", spec)
	}
	if got := c.PartitionsOf("gpu001"); !reflect.DeepEqual(got, []string{"gpu", "debug"}) {
		t.Fatalf("partitions of gpu001: %v", got)
	}
	if !c.IsOperator("olga") || c.IsAdmin("olga") || !c.IsAdmin("root") || c.IsOperator("alice") {
		t.Fatal("roles from admins/operators")
	}
	if got := c.UserAccounts("carol"); !reflect.DeepEqual(got, []string{"astro"}) {
		t.Fatalf("carol's accounts: %v", got)
	}
	assocs := c.Associations()
	var keys []string
	for _, a := range assocs {
		keys = append(keys, a.Key+"<"+a.Parent)
	}
	want := []string{"physics<", "physics/alice<physics", "physics/bob<physics", "astro<physics", "astro/carol<astro", "bio<", "bio/dave<bio"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("associations %v, want %v", keys, want)
	}
	cfg := c.CoreConfig()
	if cfg.Backfill != core.BackfillConservative || cfg.MaxReservations != 50 || cfg.Priority.Weights.FairShare != 20000 ||
		cfg.Priority.Weights.Age != 500 || cfg.Priority.Weights.JobSize != 1000 || cfg.Priority.MaxAge != 14*24*time.Hour || cfg.Priority.FairShare != "classic" {
		t.Fatalf("core config: %+v", cfg)
	}
	if c.Priority.Billing != accounting.BillMaxTRES {
		t.Fatalf("priority.billing: %v, want MAX_TRES", c.Priority.Billing)
	}
	if c.RequeueOnNodeFail || c.EventRetention != 90*24*time.Hour || c.Auth.TokenTTL != 7*24*time.Hour {
		t.Fatalf("top-level fields: %+v", c)
	}
}

func TestErrorsNameLineAndField(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"bad duration", "cluster: x\npartitions:\n  - name: a\n    nodes: n1\n  - name: b\n    nodes: n2\n    maxTime: 2-00:00:0x\n",
			[]string{`c.yaml:7: partitions[1].maxTime: "2-00:00:0x" is not a duration`}},
		{"unknown field", "cluster: x\npartitions:\n  - name: a\n    nodes: n1\n    maxtime: 5\n",
			[]string{`c.yaml:5: partitions[0].maxtime: unknown field "maxtime"`}},
		{"type error", "cluster: x\npartitions:\n  - name: a\n    nodes: n1\n    priorityTier: high\n",
			[]string{`c.yaml:5: partitions[0].priorityTier: cannot unmarshal`}},
		{"no partitions and no name", "controller:\n  listen: :1\n",
			[]string{`c.yaml: cluster: a cluster name is required`, `c.yaml: partitions: at least one partition is required`}},
		{"bad hostlist", "cluster: x\npartitions:\n  - name: a\n    nodes: gpu[001-\n",
			[]string{`c.yaml:4: partitions[0].nodes: "gpu[001-" is not a hostlist`}},
		{"duplicate partition and two defaults", "cluster: x\npartitions:\n  - {name: a, nodes: n1, default: true}\n  - {name: a, nodes: n2, default: true}\n",
			[]string{`c.yaml:4: partitions[1].name: partition "a" is defined twice`, `c.yaml:4: partitions[1].default: only one partition may be the default`}},
		{"default over max", "cluster: x\npartitions:\n  - name: a\n    nodes: n1\n    maxTime: 1:00:00\n    defaultTime: 2:00:00\n",
			[]string{`c.yaml:6: partitions[0].defaultTime: "2:00:00" exceeds maxTime "1:00:00"`}},
		{"bad account tree", "cluster: x\npartitions: [{name: a, nodes: n1}]\naccounts:\n  - name: p\n    users: [u, u]\n  - name: q\n    parent: nope\n",
			[]string{`c.yaml:5: accounts[0].users[1]: user "u" is listed twice`, `c.yaml:7: accounts[1].parent: unknown account "nope"`}},
		{"bad scheduler", "cluster: x\npartitions: [{name: a, nodes: n1}]\nscheduler:\n  backfill: eager\n  interval: soon\n",
			[]string{`c.yaml:4: scheduler.backfill: "eager" must be easy, conservative or none`, `c.yaml:5: scheduler.interval: "soon" is not a duration`}},
		{"negative weight", "cluster: x\npartitions: [{name: a, nodes: n1}]\npriority:\n  weights:\n    age: -1\n",
			[]string{`c.yaml:5: priority.weights.age: -1 must not be negative`}},
		{"bad memory and feature", "cluster: x\npartitions: [{name: a, nodes: n1}]\nnodes:\n  - names: n1\n    memory: lots\n    features: [\"a&b\"]\n",
			[]string{`c.yaml:5: nodes[0].memory: "lots" is not a size`, `c.yaml:6: nodes[0].features[0]: "a&b" is not a feature name`}},
		{"bad billing weights", "cluster: x\npartitions:\n  - name: a\n    nodes: n1\n    billingWeights: \"CPU=1,Mem=2K\"\n",
			[]string{`c.yaml:5: partitions[0].billingWeights: accounting: invalid billing configuration: TRESBillingWeights element "Mem=2K"`}},
		{"bad billing mode", "cluster: x\npartitions: [{name: a, nodes: n1}]\npriority:\n  billing: max\n",
			[]string{`c.yaml:4: priority.billing: "max" must be sum, max_tres or max_tres_gres`}},
		{"yaml syntax", "cluster: x\npartitions: [\n", []string{`c.yaml:`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tc.text))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalid) && !strings.Contains(tc.name, "yaml") {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("error %d = %q\n want prefix %q", i, lines[i], w)
				}
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in        string
		want      time.Duration
		unlimited bool
		bad       bool
	}{
		{"90", 90 * time.Minute, false, false},
		{"5:30", 5*time.Minute + 30*time.Second, false, false},
		{"1:02:03", time.Hour + 2*time.Minute + 3*time.Second, false, false},
		{"2-12", 60 * time.Hour, false, false},
		{"1-00:30", 24*time.Hour + 30*time.Minute, false, false},
		{"7-0", 7 * 24 * time.Hour, false, false},
		{"1-01:01:01", 25*time.Hour + time.Minute + time.Second, false, false},
		{"30s", 30 * time.Second, false, false},
		{"1h30m", 90 * time.Minute, false, false},
		{"UNLIMITED", 0, true, false},
		{"2-00:00:0x", 0, false, true},
		{"1:2:3:4", 0, false, true},
		{"-5m", 0, false, true},
		{"", 0, false, true},
		{"x-1", 0, false, true},
	}
	for _, tc := range tests {
		got, unl, err := ParseDuration(tc.in)
		if (err != nil) != tc.bad || got != tc.want || unl != tc.unlimited {
			t.Errorf("ParseDuration(%q) = %v, %v, %v", tc.in, got, unl, err)
		}
	}
}

func TestParseMemoryMB(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{{"512", 512, false}, {"4G", 4096, false}, {"1T", 1 << 20, false}, {"2048K", 2, false}, {"1.5g", 1536, false}, {"lots", 0, true}, {"-1G", 0, true}}
	for _, tc := range tests {
		got, err := ParseMemoryMB(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseMemoryMB(%q) = %d, %v", tc.in, got, err)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v", err)
	}
}
