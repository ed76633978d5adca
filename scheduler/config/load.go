package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is one problem in the file, located by line and field path
// ("partitions[1].maxTime").
type Error struct {
	File string
	Line int
	Path string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrInvalid is wrapped by Errors.
var ErrInvalid = errors.New("config: invalid cluster configuration")

// Errors is every problem found, in file order.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap lets errors.Is find ErrInvalid and each *Error.
func (es Errors) Unwrap() []error {
	out := []error{ErrInvalid}
	for _, e := range es {
		out = append(out, e)
	}
	return out
}

// Load reads, parses and checks a cluster file.
func Load(path string) (*Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse parses and checks a cluster file's content; name labels messages.
// On failure the error is an Errors listing every problem.
func Parse(name string, data []byte) (*Cluster, error) {
	p := &parser{file: name, lines: map[string]int{}}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, Errors{p.yamlError(err)}
	}
	if len(root.Content) == 0 {
		return nil, Errors{{File: name, Line: 1, Msg: "empty file: need at least a cluster name and one partition"}}
	}
	p.index(root.Content[0], "")
	var raw rawCluster
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, m := range te.Errors {
				p.errs = append(p.errs, p.yamlMessage(m))
			}
			return nil, p.result()
		}
		return nil, Errors{p.yamlError(err)}
	}
	c := p.build(&raw)
	if len(p.errs) > 0 {
		return nil, p.result()
	}
	return c, nil
}

type parser struct {
	file  string
	lines map[string]int // field path → line of its value
	errs  Errors
}

// index records the line of every field path in the document.
func (p *parser) index(n *yaml.Node, path string) {
	if path != "" {
		p.lines[path] = n.Line
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			p.lines[sub] = n.Content[i].Line
			p.index(n.Content[i+1], sub)
			p.lines[sub] = n.Content[i].Line
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p.index(c, path+"["+strconv.Itoa(i)+"]")
		}
	}
}

// line finds the line of path, or of its nearest ancestor present in the file.
func (p *parser) line(path string) int {
	for path != "" {
		if l, ok := p.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

func (p *parser) errorf(path, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: p.line(path), Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) result() error {
	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
	return p.errs
}

var (
	lineRe    = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownRe = regexp.MustCompile(`^field (\S+) not found in type`)
)

func (p *parser) yamlError(err error) *Error {
	for _, m := range strings.Split(err.Error(), "\n") {
		if e := p.yamlMessage(strings.TrimSpace(m)); e.Line > 0 {
			return e
		}
	}
	return &Error{File: p.file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
}

// yamlMessage turns a decoder message into an Error naming the field at its line.
func (p *parser) yamlMessage(m string) *Error {
	sm := lineRe.FindStringSubmatch(m)
	if sm == nil {
		return &Error{File: p.file, Msg: m}
	}
	line, _ := strconv.Atoi(sm[1])
	msg := sm[2]
	path := p.deepestAt(line)
	if um := unknownRe.FindStringSubmatch(msg); um != nil {
		msg = fmt.Sprintf("unknown field %q", um[1])
	}
	return &Error{File: p.file, Line: line, Path: path, Msg: msg}
}

func (p *parser) deepestAt(line int) string {
	best := ""
	for path, l := range p.lines {
		if l == line && (len(path) > len(best) || (len(path) == len(best) && path < best)) {
			best = path
		}
	}
	return best
}
