package jobspec

import (
	"strings"
)

// argKind says whether an option takes a value.
type argKind int

const (
	noArg       argKind = iota // a flag
	requiredArg                // --opt=v, --opt v, -ov, -o v
	optionalArg                // only --opt=v; a following word is not consumed
)

// setting is one option occurrence: which option, its value and where it
// came from. level orders sources: directives < SBATCH_* < command line.
type setting struct {
	spec     *optionSpec
	name     string // the long name, for messages ("--time")
	value    string
	hasValue bool
	source   string
	level    int
}

// reasonNeedsValue is the error of an option left without its value: at
// the end of a directive, sbatch takes the next directive's first word.
const reasonNeedsValue = "requires a value"

// Source levels, lowest precedence first.
const (
	levelDefault = iota
	levelDirective
	levelEnv
	levelCLI
)

// getopt reads words as getopt_long does with a leading '+': long options
// (unique prefixes allowed), short options (clustered flags, attached or
// separate values), "--" ending the options. It stops at the first word
// that is not an option and returns the rest.
func getopt(words []string, table *optionTable, source string, level int) ([]setting, []string, error) {
	var out []setting
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return out, words[i+1:], nil
		case !strings.HasPrefix(w, "-") || w == "-":
			return out, words[i:], nil
		}
		var sets []setting
		var used int
		var err error
		if strings.HasPrefix(w, "--") {
			sets, used, err = longOption(words[i:], table)
		} else {
			sets, used, err = shortOptions(words[i:], table)
		}
		if err != nil {
			err.(*OptionError).Source = source
			return nil, nil, err
		}
		for k := range sets {
			sets[k].source, sets[k].level = source, level
		}
		out = append(out, sets...)
		i += used - 1
	}
	return out, nil, nil
}

func longOption(words []string, table *optionTable) ([]setting, int, error) {
	name, value, hasValue := strings.Cut(words[0][2:], "=")
	spec, err := table.lookupLong(name)
	if err != nil {
		return nil, 0, err
	}
	s := setting{spec: spec, name: "--" + spec.long, value: value, hasValue: hasValue}
	switch spec.arg {
	case noArg:
		if hasValue {
			return nil, 0, &OptionError{Option: s.name, Value: value, Reason: "takes no value"}
		}
	case requiredArg:
		if !hasValue {
			if len(words) < 2 {
				return nil, 0, &OptionError{Option: s.name, Reason: reasonNeedsValue}
			}
			s.value, s.hasValue = words[1], true
			return []setting{s}, 2, nil
		}
	}
	return []setting{s}, 1, nil
}

func shortOptions(words []string, table *optionTable) ([]setting, int, error) {
	w := words[0]
	var out []setting
	for j := 1; j < len(w); j++ {
		spec := table.byShort[w[j]]
		if spec == nil {
			return nil, 0, &OptionError{Option: "-" + w[j:j+1], Reason: "unknown option"}
		}
		s := setting{spec: spec, name: "--" + spec.long}
		if spec.arg == noArg || spec.arg == optionalArg {
			out = append(out, s)
			continue
		}
		if j+1 < len(w) {
			s.value, s.hasValue = w[j+1:], true
			return append(out, s), 1, nil
		}
		if len(words) < 2 {
			return nil, 0, &OptionError{Option: s.name, Reason: reasonNeedsValue}
		}
		s.value, s.hasValue = words[1], true
		return append(out, s), 2, nil
	}
	return out, 1, nil
}

// optionTable indexes the option specs by name.
type optionTable struct {
	specs   []*optionSpec
	byLong  map[string]*optionSpec
	byShort map[byte]*optionSpec
}

func newOptionTable(specs []*optionSpec) *optionTable {
	t := &optionTable{specs: specs, byLong: map[string]*optionSpec{}, byShort: map[byte]*optionSpec{}}
	for _, s := range specs {
		if s.long != "" && !s.envOnly {
			t.byLong[s.long] = s
			for _, a := range s.aliases {
				t.byLong[a] = s
			}
		}
		if s.short != 0 {
			t.byShort[s.short] = s
		}
	}
	return t
}

// lookupLong finds an option by exact name or unique prefix, as
// getopt_long does: a prefix of several names of one option (an option
// and its alias) is that option, not an ambiguity. Parity's own options
// (exactOnly) answer to their full name only, so they never make a
// prefix that sbatch accepts ambiguous (--pars is --parsable).
func (t *optionTable) lookupLong(name string) (*optionSpec, error) {
	if s := t.byLong[name]; s != nil {
		return s, nil
	}
	var match *optionSpec
	var candidates []string
	for _, s := range t.specs {
		if name == "" || s.envOnly || s.exactOnly || !s.hasPrefix(name) {
			continue
		}
		if s != match {
			match = s
			candidates = append(candidates, "--"+s.long)
		}
	}
	switch len(candidates) {
	case 1:
		return match, nil
	case 0:
		return nil, &OptionError{Option: "--" + name, Reason: "unknown option"}
	}
	return nil, &OptionError{Option: "--" + name, Reason: "ambiguous option (could be " + strings.Join(candidates, ", ") + ")"}
}

func (s *optionSpec) hasPrefix(p string) bool {
	if strings.HasPrefix(s.long, p) {
		return true
	}
	for _, a := range s.aliases {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}
