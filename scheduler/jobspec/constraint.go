package jobspec

import (
	"strconv"
	"strings"
)

// ConstraintOp is the kind of a constraint node.
type ConstraintOp string

// Constraint node kinds.
const (
	ConstraintFeature  ConstraintOp = "feature"   // a node feature, optionally with a node count
	ConstraintAnd      ConstraintOp = "and"       // a&b
	ConstraintOr       ConstraintOp = "or"        // a|b
	ConstraintMatchOr  ConstraintOp = "match-or"  // [a|b]: all nodes share one alternative
	ConstraintMatchAnd ConstraintOp = "match-and" // [a*2&b*4]: counts per feature
)

// Constraint is a parsed --constraint feature expression, as a tree. It
// marshals as its canonical string.
type Constraint struct {
	Op      ConstraintOp
	Feature string
	Count   int // gpu*4: nodes with the feature
	Terms   []*Constraint
}

// ParseConstraint reads a --constraint expression: features joined by &
// (and) or | (or), evaluated strictly left to right without parentheses
// ("a|b&c" is (a|b)&c); parentheses group; name*N asks for N nodes with the
// feature; one bracketed set per job, [a|b|c] (matching OR: every node has
// the same alternative) or [a*2&b*4].
func ParseConstraint(s string) (*Constraint, error) {
	p := constraintParser{in: s}
	c, err := p.expr(0)
	if err == nil && p.pos < len(p.in) {
		err = reason("unexpected " + strconv.Quote(p.in[p.pos:]))
	}
	if err != nil {
		return nil, syntaxErr("constraint", s, "%v", err)
	}
	return c, nil
}

type constraintParser struct {
	in       string
	pos      int
	brackets int
}

func (p *constraintParser) peek() byte {
	if p.pos < len(p.in) {
		return p.in[p.pos]
	}
	return 0
}

// maxConstraintDepth bounds parenthesis nesting so hostile input cannot
// exhaust the stack.
const maxConstraintDepth = 64

func (p *constraintParser) expr(depth int) (*Constraint, error) {
	if depth > maxConstraintDepth {
		return nil, reason("parentheses nested too deeply")
	}
	left, err := p.term(depth)
	if err != nil {
		return nil, err
	}
	for {
		var op ConstraintOp
		switch p.peek() {
		case '&':
			op = ConstraintAnd
		case '|':
			op = ConstraintOr
		default:
			return left, nil
		}
		p.pos++
		right, err := p.term(depth)
		if err != nil {
			return nil, err
		}
		left = join(op, left, right)
	}
}

// join combines left-to-right, flattening chains of one operator.
func join(op ConstraintOp, left, right *Constraint) *Constraint {
	var terms []*Constraint
	for _, c := range []*Constraint{left, right} {
		if c.Op == op {
			terms = append(terms, c.Terms...)
		} else {
			terms = append(terms, c)
		}
	}
	return &Constraint{Op: op, Terms: terms}
}

func (p *constraintParser) term(depth int) (*Constraint, error) {
	switch p.peek() {
	case '(':
		p.pos++
		c, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, reason("missing ')'")
		}
		p.pos++
		return c, nil
	case '[':
		return p.bracket()
	}
	return p.feature()
}

func (p *constraintParser) bracket() (*Constraint, error) {
	if p.brackets++; p.brackets > 1 {
		return nil, reason("only one bracketed set is allowed")
	}
	p.pos++
	c := &Constraint{}
	for {
		f, err := p.feature()
		if err != nil {
			return nil, err
		}
		c.Terms = append(c.Terms, f)
		var op ConstraintOp
		switch p.peek() {
		case ']':
			p.pos++
			if c.Op == "" {
				c.Op = ConstraintMatchOr
			}
			return c, nil
		case '|':
			op = ConstraintMatchOr
		case '&':
			op = ConstraintMatchAnd
		default:
			return nil, reason("missing ']'")
		}
		if c.Op != "" && c.Op != op {
			return nil, reason("'&' and '|' cannot be mixed inside brackets")
		}
		c.Op = op
		p.pos++
	}
}

func isFeatureChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' || c == '-' || c == '.' || c == ':'
}

func (p *constraintParser) feature() (*Constraint, error) {
	start := p.pos
	for p.pos < len(p.in) && isFeatureChar(p.in[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		if p.pos >= len(p.in) {
			return nil, reason("expected a feature name at the end")
		}
		return nil, reason("expected a feature name at " + strconv.Quote(p.in[p.pos:]))
	}
	c := &Constraint{Op: ConstraintFeature, Feature: p.in[start:p.pos]}
	if p.peek() == '*' {
		p.pos++
		d := leadingDigits(p.in[p.pos:])
		p.pos += len(d)
		n, err := parseCount(d)
		if err != nil || n < 1 {
			return nil, reason("count after " + c.Feature + "* must be a positive integer")
		}
		c.Count = n
	}
	return c, nil
}

// String renders the canonical form, which ParseConstraint reads back to an
// equal tree; composite operands of another operator get parentheses.
func (c *Constraint) String() string {
	switch c.Op {
	case ConstraintFeature:
		if c.Count > 0 {
			return c.Feature + "*" + strconv.Itoa(c.Count)
		}
		return c.Feature
	case ConstraintMatchOr, ConstraintMatchAnd:
		return "[" + c.joinTerms() + "]"
	}
	return c.joinTerms()
}

func (c *Constraint) joinTerms() string {
	sep := "&"
	if c.Op == ConstraintOr || c.Op == ConstraintMatchOr {
		sep = "|"
	}
	parts := make([]string, len(c.Terms))
	for i, t := range c.Terms {
		parts[i] = t.String()
		if t.Op == ConstraintAnd || t.Op == ConstraintOr {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, sep)
}

// Matches reports whether a node with the given features satisfies the
// expression, ignoring counts (they constrain the set of nodes, not one):
// a node may serve any alternative of a bracketed set.
func (c *Constraint) Matches(has func(feature string) bool) bool {
	switch c.Op {
	case ConstraintFeature:
		return has(c.Feature)
	case ConstraintAnd:
		for _, t := range c.Terms {
			if !t.Matches(has) {
				return false
			}
		}
		return true
	}
	for _, t := range c.Terms {
		if t.Matches(has) {
			return true
		}
	}
	return false
}

// Features lists the feature names the expression mentions, in order.
func (c *Constraint) Features() []string {
	if c.Op == ConstraintFeature {
		return []string{c.Feature}
	}
	var out []string
	for _, t := range c.Terms {
		out = append(out, t.Features()...)
	}
	return out
}

// MarshalText renders String.
func (c *Constraint) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText parses with ParseConstraint.
func (c *Constraint) UnmarshalText(b []byte) error {
	p, err := ParseConstraint(string(b))
	if err != nil {
		return err
	}
	*c = *p
	return nil
}
