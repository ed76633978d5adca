package labfile

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/parityhpc/parity/labs/sim"
	"go.yaml.in/yaml/v3"
)

// Layout is the template's host layout with the node set's CPU and
// memory overrides applied.
func (ns NodeSet) Layout(base sim.HostLayout) sim.HostLayout {
	if ns.Sockets > 0 {
		base.Sockets = ns.Sockets
	}
	if ns.CoresPerSocket > 0 {
		base.CoresPerSocket = ns.CoresPerSocket
	}
	if ns.ThreadsPerCore > 0 {
		base.ThreadsPerCore = ns.ThreadsPerCore
	}
	if ns.MemoryMB > 0 {
		base.MemoryBytes = uint64(ns.MemoryMB) << 20
	}
	return base
}

// Layout is the node's host layout on the template's (see NodeSet.Layout).
func (n Node) Layout(base sim.HostLayout) sim.HostLayout { return n.Shape.Layout(base) }

// checkShape rejects overrides the template's machine cannot take; it
// returns the field at fault.
func (ns NodeSet) checkShape(base sim.HostLayout) (string, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"sockets", ns.Sockets}, {"coresPerSocket", ns.CoresPerSocket}, {"threadsPerCore", ns.ThreadsPerCore}} {
		if f.v < 0 || f.v > 4096 {
			return f.name, fmt.Errorf("%d must be within 1..4096 (0 or absent keeps the template's)", f.v)
		}
	}
	if ns.MemoryMB < 0 || ns.MemoryMB > 1<<30 {
		return "memoryMB", fmt.Errorf("%d must be within 1..%d (1 PiB; 0 or absent keeps the template's)", ns.MemoryMB, 1<<30)
	}
	l := ns.Layout(base)
	if l.NUMANodes > 0 && (l.Sockets*l.CoresPerSocket)%l.NUMANodes != 0 {
		return "coresPerSocket", fmt.Errorf("%d sockets of %d cores cannot be split across the template's %d NUMA nodes", l.Sockets, l.CoresPerSocket, l.NUMANodes)
	}
	return "", nil
}

// Priority is the lab controller's multifactor weights; an unset weight
// keeps the controller's default.
type Priority struct {
	Age       *float64 `yaml:"age,omitempty"`
	FairShare *float64 `yaml:"fairshare,omitempty"`
	JobSize   *float64 `yaml:"jobSize,omitempty"`
	Partition *float64 `yaml:"partition,omitempty"`
	QOS       *float64 `yaml:"qos,omitempty"`
	line      int
}

// UnmarshalYAML keeps the block's line for errors.
func (p *Priority) UnmarshalYAML(v *yaml.Node) error {
	type plain Priority
	p.line = v.Line
	if err := knownFields(v, plain{}); err != nil {
		return err
	}
	return v.Decode((*plain)(p))
}

// knownFields refuses a mapping key that names no field of into's type:
// a Decode inside UnmarshalYAML does not apply the decoder's KnownFields,
// and a misspelt weight or CPU count must not pass for the default.
func knownFields(v *yaml.Node, into any) error {
	if v.Kind != yaml.MappingNode {
		return nil
	}
	known := map[string]bool{}
	t := reflect.TypeOf(into)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		known[name] = name != ""
	}
	for i := 0; i < len(v.Content); i += 2 {
		if k := v.Content[i]; !known[k.Value] {
			return fmt.Errorf("line %d: field %s not found in type %s", k.Line, k.Value, t.Name())
		}
	}
	return nil
}

// Weights lists the set weights by their cluster configuration names.
func (p *Priority) Weights() map[string]float64 {
	out := map[string]float64{}
	if p == nil {
		return out
	}
	for name, w := range map[string]*float64{"age": p.Age, "fairshare": p.FairShare, "jobSize": p.JobSize, "partition": p.Partition, "qos": p.QOS} {
		if w != nil {
			out[name] = *w
		}
	}
	return out
}

// check returns the line and field of a negative weight.
func (p *Priority) check() (int, string, error) {
	ws := p.Weights()
	names := make([]string, 0, len(ws))
	for name := range ws {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if ws[name] < 0 {
			return p.line, "priority." + name, fmt.Errorf("%v must not be negative", ws[name])
		}
	}
	return 0, "", nil
}
