package labfile

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/parityhpc/parity/labs/presets"
)

// anchorShape is the Slurm anchor's nodes: 16 CPUs (2:8:1), 64000 MB and
// the dgx-h100 template's 8 H100, with no priority weights.
const anchorShape = `name: anchor
priority: {age: 0, fairshare: 0, jobSize: 0, partition: 0, qos: 0}
nodes:
  - names: n[1-4]
    template: dgx-h100
    sockets: 2
    coresPerSocket: 8
    threadsPerCore: 1
    memoryMB: 64000
`

// TestNodeShapeOverridesTheTemplate: a node set's CPUs and memory replace
// the template's (what its nodes report), the rest stays the template's,
// and the lab survives the round trip a process lab makes through YAML.
func TestNodeShapeOverridesTheTemplate(t *testing.T) {
	lab, err := Parse("anchor.yaml", []byte(anchorShape))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := presets.Lookup("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	check := func(lab *Lab) {
		t.Helper()
		nodes := lab.NodeList()
		if len(nodes) != 4 {
			t.Fatalf("%d nodes, want 4", len(nodes))
		}
		l := nodes[2].Layout(tmpl.Layout)
		if l.CPUs() != 16 || l.Sockets != 2 || l.CoresPerSocket != 8 || l.ThreadsPerCore != 1 || l.MemoryBytes != 64000<<20 {
			t.Errorf("n3's layout %+v, want 2:8:1 and 64000 MB", l)
		}
		if l.NUMANodes != tmpl.Layout.NUMANodes {
			t.Errorf("NUMA nodes %d, want the template's %d", l.NUMANodes, tmpl.Layout.NUMANodes)
		}
		if ws := lab.Priority.Weights(); len(ws) != 5 || ws["jobSize"] != 0 {
			t.Errorf("priority weights %v, want all five at 0", ws)
		}
	}
	check(lab)
	data, err := yaml.Marshal(lab)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse("again.yaml", data)
	if err != nil {
		t.Fatalf("the marshalled lab does not parse: %v\n%s", err, data)
	}
	check(again)
	plain, err := Parse("plain.yaml", []byte("name: p\nnodes:\n  - names: n1\n    template: dgx-h100\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := plain.NodeList()[0].Layout(tmpl.Layout); l != tmpl.Layout {
		t.Errorf("a node set without overrides has layout %+v, want the template's %+v", l, tmpl.Layout)
	}
	if plain.Priority.Weights()["age"] != 0 || len(plain.Priority.Weights()) != 0 {
		t.Errorf("a lab without priority sets weights %v", plain.Priority.Weights())
	}
}

func TestShapeErrorsNameFieldAndValue(t *testing.T) {
	node := "name: t\nnodes:\n  - names: n1\n    template: dgx-h100\n"
	tests := []struct{ name, yaml, want string }{
		{"negative sockets", node + "    sockets: -2\n", `t.yaml:3: nodes[0].sockets: -2 must be within 1..4096`},
		{"huge cores", node + "    coresPerSocket: 5000\n", `nodes[0].coresPerSocket: 5000 must be within 1..4096`},
		{"negative threads", node + "    threadsPerCore: -1\n", `nodes[0].threadsPerCore: -1`},
		{"cores not split over NUMA", node + "    sockets: 1\n    coresPerSocket: 7\n", `nodes[0].coresPerSocket: 1 sockets of 7 cores cannot be split across the template's 2 NUMA nodes`},
		{"memory not a number", node + "    memoryMB: lots\n", "line 5: cannot unmarshal !!str `lots`"},
		{"memory negative", node + "    memoryMB: -5\n", `nodes[0].memoryMB: -5 must be within 1..1073741824`},
		{"memory too large", node + "    memoryMB: 2000000000\n", `nodes[0].memoryMB: 2000000000 must be within`},
		{"misspelt shape field", node + "    cpus: 16\n", `line 5: field cpus not found`},
		{"negative weight", node + "priority:\n  qos: 1\n  jobSize: -3\n", `t.yaml:6: priority.jobSize: -3 must not be negative`},
		{"unknown weight", node + "priority:\n  tres: 1\n", `line 6: field tres not found`},
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

// FuzzParse: no lab text makes Parse panic; what it accepts marshals and
// parses again.
func FuzzParse(f *testing.F) {
	for _, name := range BuiltinNames() {
		lab, err := Builtin(name)
		if err != nil {
			f.Fatal(err)
		}
		data, err := yaml.Marshal(lab)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(anchorShape))
	f.Add([]byte("name: t\nnodes:\n  - names: n1\n    template: dgx-h100\n    sockets: 1\n    coresPerSocket: 7\n"))
	f.Add([]byte("name: t\nnodes:\n  - names: n1\n    template: cpu\npriority: {age: -1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lab, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		out, err := yaml.Marshal(lab)
		if err != nil {
			t.Fatalf("marshal an accepted lab: %v", err)
		}
		if _, err := Parse("again.yaml", out); err != nil {
			t.Fatalf("an accepted lab does not parse again: %v\n%s", err, out)
		}
	})
}
