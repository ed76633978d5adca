package jobspec

import (
	"errors"
	"slices"
	"testing"
)

func TestParseConstraint(t *testing.T) {
	f := func(name string, count int) *Constraint {
		return &Constraint{Op: ConstraintFeature, Feature: name, Count: count}
	}
	node := func(op ConstraintOp, terms ...*Constraint) *Constraint { return &Constraint{Op: op, Terms: terms} }
	tests := []struct {
		in   string
		want *Constraint
		text string
	}{
		{"a", f("a", 0), "a"},
		{"a&b&c", node(ConstraintAnd, f("a", 0), f("b", 0), f("c", 0)), "a&b&c"},
		{"a|b&c", node(ConstraintAnd, node(ConstraintOr, f("a", 0), f("b", 0)), f("c", 0)), "(a|b)&c"},
		{"a&b|c", node(ConstraintOr, node(ConstraintAnd, f("a", 0), f("b", 0)), f("c", 0)), "(a&b)|c"},
		{"a&(b|c)", node(ConstraintAnd, f("a", 0), node(ConstraintOr, f("b", 0), f("c", 0))), "a&(b|c)"},
		{"gpu*4", f("gpu", 4), "gpu*4"},
		{"[r1|r2|r3]", node(ConstraintMatchOr, f("r1", 0), f("r2", 0), f("r3", 0)), "[r1|r2|r3]"},
		{"[rack1*2&rack2*4]", node(ConstraintMatchAnd, f("rack1", 2), f("rack2", 4)), "[rack1*2&rack2*4]"},
		{"h100&[r1|r2]", node(ConstraintAnd, f("h100", 0), node(ConstraintMatchOr, f("r1", 0), f("r2", 0))), "h100&[r1|r2]"},
		{"((a))", f("a", 0), "a"},
		{"(a&b)&c", node(ConstraintAnd, f("a", 0), f("b", 0), f("c", 0)), "a&b&c"},
		{"nvlink.v4&ib-ndr", node(ConstraintAnd, f("nvlink.v4", 0), f("ib-ndr", 0)), "nvlink.v4&ib-ndr"},
	}
	for _, tt := range tests {
		got, err := ParseConstraint(tt.in)
		if err != nil || got.String() != tt.text || !equalConstraint(got, tt.want) {
			t.Errorf("ParseConstraint(%q) = %v, %v; want %s", tt.in, got, err, tt.text)
			continue
		}
		back, err := ParseConstraint(got.String())
		if err != nil || !equalConstraint(back, got) {
			t.Errorf("ParseConstraint(%q) does not read back: %v", got.String(), err)
		}
	}
}

func equalConstraint(a, b *Constraint) bool {
	if a.Op != b.Op || a.Feature != b.Feature || a.Count != b.Count || len(a.Terms) != len(b.Terms) {
		return false
	}
	for i := range a.Terms {
		if !equalConstraint(a.Terms[i], b.Terms[i]) {
			return false
		}
	}
	return true
}

func TestParseConstraintRejects(t *testing.T) {
	for _, in := range []string{"", "a&", "&a", "a||b", "(a", "a)", "[a|b", "[a|b&c]", "[a]&[b]", "a*0", "a*", "a b",
		"[(a)]", "a!b", "()"} {
		_, err := ParseConstraint(in)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Value != in {
			t.Errorf("ParseConstraint(%q) error = %v; want a SyntaxError naming the value", in, err)
		}
	}
}

func TestConstraintMatches(t *testing.T) {
	c, _ := ParseConstraint("a|b&c")
	has := func(fs ...string) func(string) bool { return func(f string) bool { return slices.Contains(fs, f) } }
	for _, tt := range []struct {
		features []string
		want     bool
	}{{[]string{"a", "c"}, true}, {[]string{"a"}, false}, {[]string{"b", "c"}, true}, {[]string{"c"}, false}} {
		if got := c.Matches(has(tt.features...)); got != tt.want {
			t.Errorf("(a|b)&c on %v = %v; want %v", tt.features, got, tt.want)
		}
	}
	m, _ := ParseConstraint("[r1*2&r2*4]")
	if !m.Matches(has("r2")) || m.Matches(has("r3")) {
		t.Errorf("a node serves any part of a bracketed count set")
	}
	if got := m.Features(); !slices.Equal(got, []string{"r1", "r2"}) {
		t.Errorf("Features = %v", got)
	}
}
