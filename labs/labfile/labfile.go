package labfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/topology"
)

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("labfile: invalid lab")

// Lab is a parsed, validated lab.
type Lab struct {
	Name       string      `yaml:"name"`
	Seed       int64       `yaml:"seed"`
	Nodes      []NodeSet   `yaml:"nodes"`
	Partitions []Partition `yaml:"partitions"`
	Switches   []Switch    `yaml:"switches"`
	Faults     []Fault     `yaml:"faults"`
	// Priority, when set, replaces the controller's multifactor weights
	// (a lab shaped as a Slurm whose slurm.conf sets no PriorityWeight*
	// gives every weight 0).
	Priority *Priority `yaml:"priority,omitempty"`
}

// NodeSet is a group of nodes, named by a hostlist, built from one template.
type NodeSet struct {
	Names    string   `yaml:"names"`
	Template string   `yaml:"template"`
	Features []string `yaml:"features"`
	// Sockets, CoresPerSocket, ThreadsPerCore and MemoryMB, when set,
	// replace the template's CPUs and memory (the GPUs stay the
	// template's), so a lab can take the shape of a slurm.conf's nodes
	// (CPUs=16 Sockets=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=64000).
	Sockets        int   `yaml:"sockets,omitempty"`
	CoresPerSocket int   `yaml:"coresPerSocket,omitempty"`
	ThreadsPerCore int   `yaml:"threadsPerCore,omitempty"`
	MemoryMB       int64 `yaml:"memoryMB,omitempty"`
	line           int
}

// Partition groups nodes for scheduling.
type Partition struct {
	Name    string `yaml:"name"`
	Nodes   string `yaml:"nodes"`
	Default bool   `yaml:"default"`
	MaxTime string `yaml:"maxTime"`
	// BillingWeights is the partition's TRESBillingWeights
	// ("CPU=1,Mem=0.25G,GRES/gpu=8"); empty bills the CPU count.
	BillingWeights string `yaml:"billingWeights"`
	line           int
}

// Switch is one switch of the tree: leaves list nodes, others switches.
type Switch struct {
	Name     string `yaml:"name"`
	Nodes    string `yaml:"nodes"`
	Switches string `yaml:"switches"`
	line     int
}

// Fault is one timed fault of the lab's script.
type Fault struct {
	At    Duration `yaml:"at"`
	Node  string   `yaml:"node"`
	GPU   int      `yaml:"gpu"`
	Fault string   `yaml:"fault"`
	line  int
}

// Duration is a Go duration ("30s", "2m") in YAML.
type Duration struct{ time.Duration }

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration such as 30s or 2m", n.Line, n.Value)
	}
	d.Duration = v
	return nil
}

// MarshalYAML renders the duration as Go writes it.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// The line-capturing unmarshalers keep each item's position for errors.
func (n *NodeSet) UnmarshalYAML(v *yaml.Node) error {
	type plain NodeSet
	n.line = v.Line
	if err := knownFields(v, plain{}); err != nil {
		return err
	}
	return v.Decode((*plain)(n))
}

func (p *Partition) UnmarshalYAML(v *yaml.Node) error {
	type plain Partition
	p.line = v.Line
	return v.Decode((*plain)(p))
}

func (s *Switch) UnmarshalYAML(v *yaml.Node) error {
	type plain Switch
	s.line = v.Line
	return v.Decode((*plain)(s))
}

func (f *Fault) UnmarshalYAML(v *yaml.Node) error {
	type plain Fault
	f.line = v.Line
	return v.Decode((*plain)(f))
}

// Load reads and validates a lab file.
func Load(path string) (*Lab, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("labfile: %w", err)
	}
	return Parse(path, data)
}

// Parse validates lab YAML; name labels errors ("lab.yaml:12: …").
func Parse(name string, data []byte) (*Lab, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var lab Lab
	if err := dec.Decode(&lab); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalid, name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if err := lab.validate(name); err != nil {
		return nil, err
	}
	return &lab, nil
}

func (l *Lab) validate(file string) error {
	fail := func(line int, field, format string, args ...any) error {
		return fmt.Errorf("%w: %s:%d: %s: %s", ErrInvalid, file, line, field, fmt.Sprintf(format, args...))
	}
	if l.Name == "" {
		return fmt.Errorf("%w: %s: name: a lab needs a name", ErrInvalid, file)
	}
	if len(l.Nodes) == 0 {
		return fmt.Errorf("%w: %s: nodes: a lab needs at least one node set", ErrInvalid, file)
	}
	known := map[string]bool{}
	for i, ns := range l.Nodes {
		field := fmt.Sprintf("nodes[%d]", i)
		names, err := jobspec.ExpandHostlist(ns.Names)
		if err != nil || len(names) == 0 {
			return fail(ns.line, field+".names", "%q is not a hostlist such as h100-[1-2]", ns.Names)
		}
		tmpl, err := presets.Lookup(ns.Template)
		if err != nil {
			return fail(ns.line, field+".template", "%q is not a machine template (known: %s)", ns.Template, strings.Join(presets.Names(), ", "))
		}
		if f, err := ns.checkShape(tmpl.Layout); err != nil {
			return fail(ns.line, field+"."+f, "%v", err)
		}
		for _, n := range names {
			if known[n] {
				return fail(ns.line, field+".names", "node %q is defined twice", n)
			}
			known[n] = true
		}
	}
	defaults := 0
	partNames := map[string]bool{}
	for i, p := range l.Partitions {
		field := fmt.Sprintf("partitions[%d]", i)
		if p.Name == "" || partNames[p.Name] {
			return fail(p.line, field+".name", "%q is empty or used twice", p.Name)
		}
		partNames[p.Name] = true
		if err := l.checkNodes(p.Nodes, known); err != nil {
			return fail(p.line, field+".nodes", "%v", err)
		}
		if p.MaxTime != "" {
			if _, err := jobspec.ParseDuration(p.MaxTime); err != nil {
				return fail(p.line, field+".maxTime", "%q is not a Slurm time such as 1-00:00:00", p.MaxTime)
			}
		}
		if _, err := accounting.ParseBillingWeights(p.BillingWeights); err != nil {
			return fail(p.line, field+".billingWeights", "%v", err)
		}
		if p.Default {
			defaults++
		}
	}
	if defaults > 1 {
		return fmt.Errorf("%w: %s: partitions: %d partitions are marked default; at most one may be", ErrInvalid, file, defaults)
	}
	if _, err := l.SwitchTree(); err != nil {
		line := 0
		if len(l.Switches) > 0 {
			line = l.Switches[0].line
		}
		return fail(line, "switches", "%v", err)
	}
	if line, field, err := l.Priority.check(); err != nil {
		return fail(line, field, "%v", err)
	}
	for i, f := range l.Faults {
		field := fmt.Sprintf("faults[%d]", i)
		if !known[f.Node] {
			return fail(f.line, field+".node", "%q is not a node of this lab", f.Node)
		}
		if f.Fault == "" {
			return fail(f.line, field+".fault", "empty fault name")
		}
		if f.GPU < 0 {
			return fail(f.line, field+".gpu", "%d is negative", f.GPU)
		}
	}
	return nil
}

func (l *Lab) checkNodes(expr string, known map[string]bool) error {
	names, err := jobspec.ExpandHostlist(expr)
	if err != nil || len(names) == 0 {
		return fmt.Errorf("%q is not a hostlist", expr)
	}
	for _, n := range names {
		if !known[n] {
			return fmt.Errorf("node %q (from %q) is not defined under nodes", n, expr)
		}
	}
	return nil
}

// Node is one expanded node of a lab.
type Node struct {
	Name     string
	Template string
	Features []string
	// Shape is the node set's CPU and memory overrides (zero fields keep
	// the template's); Layout applies them.
	Shape NodeSet
}

// NodeList expands every node set, in file order.
func (l *Lab) NodeList() []Node {
	var out []Node
	for _, ns := range l.Nodes {
		names, _ := jobspec.ExpandHostlist(ns.Names) // validated by Parse
		for _, n := range names {
			out = append(out, Node{Name: n, Template: ns.Template, Features: append([]string(nil), ns.Features...), Shape: ns})
		}
	}
	return out
}

// SwitchTree builds the lab's switch tree (nil when it has none).
func (l *Lab) SwitchTree() (*topology.SwitchTree, error) {
	if len(l.Switches) == 0 {
		return nil, nil
	}
	var conf strings.Builder
	for _, s := range l.Switches {
		fmt.Fprintf(&conf, "SwitchName=%s", s.Name)
		if s.Nodes != "" {
			fmt.Fprintf(&conf, " Nodes=%s", s.Nodes)
		}
		if s.Switches != "" {
			fmt.Fprintf(&conf, " Switches=%s", s.Switches)
		}
		conf.WriteByte('\n')
	}
	return topology.ParseTopologyConf(conf.String())
}

// FaultsInOrder returns the fault script sorted by time (stable).
func (l *Lab) FaultsInOrder() []Fault {
	out := append([]Fault(nil), l.Faults...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Duration < out[j].At.Duration })
	return out
}
