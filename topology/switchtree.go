package topology

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ErrSwitchTree reports an invalid switch tree or topology.conf line.
var ErrSwitchTree = errors.New("topology: invalid switch tree")

// maxHostRange bounds one bracket range, as Slurm's MAX_RANGE does, so a
// hostile "n[0-999999999]" cannot allocate gigabytes.
const maxHostRange = 1 << 16

// SwitchDef is one topology.conf line: a leaf switch lists Nodes, an inner
// switch lists child Switches (hostlist expressions already expanded).
type SwitchDef struct {
	Name     string
	Nodes    []string
	Switches []string
}

// Switch is one switch of a SwitchTree.
type Switch struct {
	Name     string
	Parent   int      // index of the parent switch, -1 for a root
	Children []int    // child switches (inner switches only)
	Nodes    []string // attached nodes (leaf switches only)
	// Level is 0 for leaf switches and one more than the highest child
	// otherwise, as Slurm numbers switch levels.
	Level int
}

// SwitchTree is a cluster's switch hierarchy as Slurm's topology/tree
// plugin reads it from topology.conf. It is immutable once built and safe
// for concurrent reads. Switch indices are stable: children come after
// their parents' definitions are resolved, in definition order.
type SwitchTree struct {
	switches []Switch
	byName   map[string]int
	leafOf   map[string]int
}

// NewSwitchTree validates defs and builds the tree: names are unique, a
// switch has nodes or child switches but not both, every child is defined,
// has one parent and no cycle leads back to it, and a node hangs off one
// leaf switch only.
func NewSwitchTree(defs []SwitchDef) (*SwitchTree, error) {
	t := &SwitchTree{byName: make(map[string]int, len(defs)), leafOf: map[string]int{}}
	for i, d := range defs {
		switch {
		case d.Name == "":
			return nil, fmt.Errorf("%w: switch #%d has no name", ErrSwitchTree, i+1)
		case len(d.Nodes) > 0 && len(d.Switches) > 0:
			return nil, fmt.Errorf("%w: switch %q lists both Nodes and Switches", ErrSwitchTree, d.Name)
		}
		if _, dup := t.byName[d.Name]; dup {
			return nil, fmt.Errorf("%w: switch %q defined twice", ErrSwitchTree, d.Name)
		}
		t.byName[d.Name] = i
		t.switches = append(t.switches, Switch{Name: d.Name, Parent: -1, Nodes: append([]string(nil), d.Nodes...)})
		for _, n := range d.Nodes {
			if prev, dup := t.leafOf[n]; dup {
				return nil, fmt.Errorf("%w: node %q is attached to both %q and %q", ErrSwitchTree, n, defs[prev].Name, d.Name)
			}
			t.leafOf[n] = i
		}
	}
	for i, d := range defs {
		for _, c := range d.Switches {
			j, ok := t.byName[c]
			if !ok {
				return nil, fmt.Errorf("%w: switch %q names unknown child switch %q", ErrSwitchTree, d.Name, c)
			}
			if p := t.switches[j].Parent; p >= 0 {
				return nil, fmt.Errorf("%w: switch %q has two parents, %q and %q", ErrSwitchTree, c, t.switches[p].Name, d.Name)
			}
			if j == i {
				return nil, fmt.Errorf("%w: switch %q lists itself", ErrSwitchTree, c)
			}
			t.switches[j].Parent = i
			t.switches[i].Children = append(t.switches[i].Children, j)
		}
	}
	for i := range t.switches {
		if err := t.checkAcyclic(i); err != nil {
			return nil, err
		}
	}
	for i := range t.switches {
		t.switches[i].Level = t.level(i)
	}
	return t, nil
}

func (t *SwitchTree) checkAcyclic(i int) error {
	seen := map[int]bool{}
	for p := i; p >= 0; p = t.switches[p].Parent {
		if seen[p] {
			return fmt.Errorf("%w: switch %q is part of a cycle", ErrSwitchTree, t.switches[i].Name)
		}
		seen[p] = true
	}
	return nil
}

func (t *SwitchTree) level(i int) int {
	lvl := 0
	for _, c := range t.switches[i].Children {
		lvl = max(lvl, t.level(c)+1)
	}
	return lvl
}

// ParseTopologyConf reads topology.conf text: one switch per line,
// "SwitchName=s1 Nodes=n[1-4]" for a leaf or "SwitchName=top
// Switches=s[1-2]" for an inner switch, keys case-insensitive, values as
// hostlist expressions, LinkSpeed accepted and ignored, '#' starting a
// comment. Errors name the line number and the offending text.
func ParseTopologyConf(text string) (*SwitchTree, error) {
	var defs []SwitchDef
	for ln, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		var d SwitchDef
		for _, f := range fields {
			key, val, ok := strings.Cut(f, "=")
			if !ok {
				return nil, fmt.Errorf("%w: line %d: %q is not key=value", ErrSwitchTree, ln+1, f)
			}
			var err error
			switch strings.ToLower(key) {
			case "switchname":
				d.Name = val
			case "nodes":
				d.Nodes, err = ExpandHostlist(val)
			case "switches":
				d.Switches, err = ExpandHostlist(val)
			case "linkspeed":
			default:
				return nil, fmt.Errorf("%w: line %d: unknown key %q", ErrSwitchTree, ln+1, key)
			}
			if err != nil {
				return nil, fmt.Errorf("%w: line %d: %w", ErrSwitchTree, ln+1, err)
			}
		}
		if d.Name == "" {
			return nil, fmt.Errorf("%w: line %d: missing SwitchName", ErrSwitchTree, ln+1)
		}
		defs = append(defs, d)
	}
	return NewSwitchTree(defs)
}

// Len returns the number of switches.
func (t *SwitchTree) Len() int {
	if t == nil {
		return 0
	}
	return len(t.switches)
}

// Switch returns switch i (shared slices; do not modify).
func (t *SwitchTree) Switch(i int) Switch { return t.switches[i] }

// Index returns the index of the named switch.
func (t *SwitchTree) Index(name string) (int, bool) {
	i, ok := t.byName[name]
	return i, ok
}

// LeafOf returns the leaf switch a node hangs off.
func (t *SwitchTree) LeafOf(node string) (int, bool) {
	if t == nil {
		return -1, false
	}
	i, ok := t.leafOf[node]
	return i, ok
}

// Leaves returns the leaf switches under switch i (i itself for a leaf), ascending.
func (t *SwitchTree) Leaves(i int) []int {
	var out []int
	var walk func(int)
	walk = func(s int) {
		if len(t.switches[s].Children) == 0 {
			out = append(out, s)
			return
		}
		for _, c := range t.switches[s].Children {
			walk(c)
		}
	}
	walk(i)
	sort.Ints(out)
	return out
}

// LeafSpan returns how many distinct leaf switches the nodes hang off;
// nodes outside the tree count as one leaf each.
func (t *SwitchTree) LeafSpan(nodes []string) int {
	seen := map[int]bool{}
	outside := 0
	for _, n := range nodes {
		if leaf, ok := t.LeafOf(n); ok {
			seen[leaf] = true
		} else {
			outside++
		}
	}
	return len(seen) + outside
}

// ExpandHostlist expands a Slurm hostlist expression ("n[01-03,7],gpu-a1",
// "rack[0-1]_blade[0-3]") into host names in order. Zero padding follows
// the width of the low bound; commas inside brackets do not split hosts.
func ExpandHostlist(expr string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(expr); i++ {
		if i < len(expr) {
			switch expr[i] {
			case '[':
				depth++
			case ']':
				depth--
				if depth < 0 {
					return nil, fmt.Errorf("hostlist %q: unbalanced ']'", expr)
				}
			}
			if expr[i] != ',' || depth > 0 {
				continue
			}
		}
		if depth != 0 {
			return nil, fmt.Errorf("hostlist %q: unbalanced '['", expr)
		}
		if tok := strings.TrimSpace(expr[start:i]); tok != "" {
			hosts, err := expandToken(tok)
			if err != nil {
				return nil, fmt.Errorf("hostlist %q: %w", expr, err)
			}
			out = append(out, hosts...)
		}
		start = i + 1
	}
	return out, nil
}

// expandToken expands one prefix[ranges]suffix token; brackets may repeat,
// giving the cartesian product with the rightmost varying fastest.
func expandToken(tok string) ([]string, error) {
	open := strings.IndexByte(tok, '[')
	if open < 0 {
		if strings.ContainsRune(tok, ']') {
			return nil, fmt.Errorf("token %q: unbalanced ']'", tok)
		}
		return []string{tok}, nil
	}
	end := strings.IndexByte(tok[open:], ']')
	if end < 0 {
		return nil, fmt.Errorf("token %q: unbalanced '['", tok)
	}
	end += open
	nums, err := expandRanges(tok[open+1 : end])
	if err != nil {
		return nil, fmt.Errorf("token %q: %w", tok, err)
	}
	rest, err := expandToken(tok[end+1:])
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(nums)*len(rest))
	for _, n := range nums {
		for _, r := range rest {
			out = append(out, tok[:open]+n+r)
		}
	}
	return out, nil
}

func expandRanges(body string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(body, ",") {
		loStr, hiStr, isRange := strings.Cut(part, "-")
		if !isRange {
			hiStr = loStr
		}
		lo, errLo := strconv.Atoi(loStr)
		hi, errHi := strconv.Atoi(hiStr)
		switch {
		case !isDecimal(loStr) || !isDecimal(hiStr) || errLo != nil || errHi != nil:
			return nil, fmt.Errorf("range %q is not N or N-M with non-negative numbers", part)
		case hi < lo:
			return nil, fmt.Errorf("range %q ends before it starts", part)
		case hi-lo >= maxHostRange:
			return nil, fmt.Errorf("range %q holds more than %d hosts", part, maxHostRange)
		}
		width := len(loStr)
		for n := lo; n <= hi; n++ {
			out = append(out, fmt.Sprintf("%0*d", width, n))
		}
	}
	return out, nil
}

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
