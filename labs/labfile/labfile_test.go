package labfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBuiltinLabsAreValid(t *testing.T) {
	for _, name := range BuiltinNames() {
		lab, err := Builtin(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(lab.NodeList()) == 0 {
			t.Errorf("%s has no nodes", name)
		}
	}
}

func TestDefaultLabShape(t *testing.T) {
	lab, err := Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, n := range lab.NodeList() {
		count[n.Template]++
	}
	if count["dgx-h100"] != 2 || count["mi300x"] != 2 || count["cpu"] != 2 {
		t.Errorf("default lab templates = %v, want 2 H100, 2 MI300X, 2 CPU nodes", count)
	}
	tree, err := lab.SwitchTree()
	if err != nil || tree == nil {
		t.Fatalf("switch tree: %v", err)
	}
	if span := tree.LeafSpan([]string{"h100-1", "h100-2"}); span != 1 {
		t.Errorf("h100 nodes span %d leaf switches, want 1", span)
	}
	if span := tree.LeafSpan([]string{"h100-1", "mi300x-1"}); span != 2 {
		t.Errorf("h100-1 + mi300x-1 span %d leaf switches, want 2", span)
	}
}

func TestParseErrorsNameLineAndField(t *testing.T) {
	base := `name: t
nodes:
  - names: n[1-2]
    template: dgx-h100
`
	tests := []struct{ name, yaml, want string }{
		{"unknown template", "name: t\nnodes:\n  - names: n1\n    template: dgx-z900\n", `t.yaml:3: nodes[0].template: "dgx-z900" is not a machine template`},
		{"bad hostlist", "name: t\nnodes:\n  - names: n[2-1]\n    template: cpu\n", `t.yaml:3: nodes[0].names: "n[2-1]"`},
		{"duplicate node", base + "  - names: n2\n    template: cpu\n", `nodes[1].names: node "n2" is defined twice`},
		{"partition of unknown node", base + "partitions:\n  - name: p\n    nodes: n[1-3]\n", `t.yaml:6: partitions[0].nodes: node "n3"`},
		{"bad max time", base + "partitions:\n  - name: p\n    nodes: n1\n    maxTime: forever\n", `partitions[0].maxTime: "forever"`},
		{"bad billing weights", base + "partitions:\n  - name: p\n    nodes: n1\n    billingWeights: GPU\n", `t.yaml:6: partitions[0].billingWeights: accounting: invalid billing configuration: TRESBillingWeights element "GPU"`},
		{"fault on unknown node", base + "faults:\n  - at: 5s\n    node: x9\n    gpu: 1\n    fault: xid-79\n", `t.yaml:6: faults[0].node: "x9"`},
		{"bad fault time", base + "faults:\n  - at: soon\n    node: n1\n    fault: xid-79\n", `"soon" is not a duration`},
		{"unknown field", base + "nodez: 3\n", "nodez"},
		{"no name", "nodes:\n  - names: n1\n    template: cpu\n", "name: a lab needs a name"},
		{"switch to unknown", base + "switches:\n  - name: s\n    switches: nope\n", "switches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tt.yaml))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
		})
	}
}

func TestFaultsAndResolve(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lab.yaml")
	text := `name: mine
nodes:
  - names: g[1-2]
    template: dgx-h100
faults:
  - {at: 1m, node: g2, gpu: 3, fault: xid-79}
  - {at: 30s, node: g1, gpu: 0, fault: fatal}
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	lab, err := Resolve(path)
	if err != nil {
		t.Fatal(err)
	}
	f := lab.FaultsInOrder()
	if len(f) != 2 || f[0].At.Duration != 30*time.Second || f[0].Node != "g1" || f[1].GPU != 3 {
		t.Errorf("faults in order = %+v", f)
	}
	if _, err := Resolve("no-such-lab"); err == nil || !strings.Contains(err.Error(), "default") {
		t.Errorf("unknown built-in: %v (should list the built-in labs)", err)
	}
}
