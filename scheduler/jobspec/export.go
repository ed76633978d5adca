package jobspec

import (
	"maps"
	"strings"
	"unicode"
)

// ExportMode says which submit-time variables a job's environment starts
// from.
type ExportMode string

// Export modes (--export).
const (
	ExportAll  ExportMode = "ALL"  // the whole submit environment (default)
	ExportNone ExportMode = "NONE" // only SLURM_*; the user's login environment is loaded on the node
	ExportNil  ExportMode = "NIL"  // only SLURM_*, no login environment
	ExportList ExportMode = "LIST" // only the listed variables, plus SLURM_*
)

// ExportVar is one variable named in --export: with a value (VAR=val) or
// taking the submitter's value (VAR).
type ExportVar struct {
	Name     string
	Value    string
	HasValue bool
}

// Export is a parsed --export value.
type Export struct {
	Mode ExportMode
	Vars []ExportVar
}

// ParseExport reads --export: ALL, NONE, NIL, or [ALL,]VAR[=value][,...]
// (any case for the keywords). A value may be quoted with ' or " to hold
// commas.
func ParseExport(s string) (Export, error) {
	v := strings.TrimSpace(s)
	items, err := splitExport(v)
	if err != nil {
		return Export{}, syntaxErr("export", s, "%v", err)
	}
	e := Export{Mode: ExportList}
	for i, it := range items {
		switch kw := ExportMode(strings.ToUpper(it.Name)); {
		case !it.HasValue && (kw == ExportNone || kw == ExportNil):
			if len(items) > 1 {
				return Export{}, syntaxErr("export", s, "%s cannot be combined with variables", kw)
			}
			return Export{Mode: kw}, nil
		case !it.HasValue && kw == ExportAll:
			if i > 0 {
				return Export{}, syntaxErr("export", s, "ALL must come first")
			}
			e.Mode = ExportAll
		case !validEnvName(it.Name):
			return Export{}, syntaxErr("export", s, "%q is not a variable name", it.Name)
		default:
			e.Vars = append(e.Vars, it)
		}
	}
	if len(items) == 0 {
		return Export{}, syntaxErr("export", s, "empty")
	}
	return e, nil
}

func splitExport(v string) ([]ExportVar, error) {
	var out []ExportVar
	for v != "" {
		end := strings.IndexAny(v, ",=")
		if end < 0 {
			out, v = append(out, ExportVar{Name: v}), ""
			break
		}
		it := ExportVar{Name: v[:end]}
		if v[end] == ',' {
			out, v = append(out, it), v[end+1:]
			continue
		}
		v = v[end+1:]
		it.HasValue = true
		if v != "" && (v[0] == '"' || v[0] == '\'') {
			closing := strings.IndexByte(v[1:], v[0])
			if closing < 0 {
				return nil, reason("unterminated quote in the value of " + it.Name)
			}
			it.Value, v = v[1:closing+1], v[closing+2:]
			if v != "" && v[0] != ',' {
				return nil, reason("text after the quoted value of " + it.Name)
			}
		} else {
			comma := strings.IndexByte(v, ',')
			if comma < 0 {
				comma = len(v)
			}
			it.Value, v = v[:comma], v[comma:]
		}
		out = append(out, it)
		v = strings.TrimPrefix(v, ",")
	}
	return out, nil
}

func validEnvName(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// String renders the canonical form, which ParseExport reads back to an
// equal Export.
func (e Export) String() string {
	if e.Mode == "" {
		return string(ExportAll)
	}
	if e.Mode == ExportNone || e.Mode == ExportNil || e.Mode == ExportAll && len(e.Vars) == 0 {
		return string(e.Mode)
	}
	var parts []string
	if e.Mode == ExportAll {
		parts = append(parts, string(ExportAll))
	}
	for i, v := range e.Vars {
		if !v.HasValue {
			parts = append(parts, v.Name)
			continue
		}
		val := v.Value
		// ParseExport trims the whole option, so trailing blanks of the last
		// value survive only inside quotes.
		last := i == len(e.Vars)-1
		trailingBlank := last && strings.TrimRightFunc(val, unicode.IsSpace) != val
		if strings.Contains(val, ",") || strings.HasPrefix(val, "'") || strings.HasPrefix(val, "\"") || trailingBlank {
			q := "'"
			if strings.Contains(val, "'") {
				q = "\""
			}
			val = q + val + q
		}
		parts = append(parts, v.Name+"="+val)
	}
	return strings.Join(parts, ",")
}

// MarshalText renders String.
func (e Export) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText parses with ParseExport.
func (e *Export) UnmarshalText(b []byte) error {
	p, err := ParseExport(string(b))
	if err != nil {
		return err
	}
	*e = p
	return nil
}

// Apply builds the environment a job starts from, given the submitter's
// environment: ALL keeps everything and adds the listed VAR=val only where
// the submitter has no such variable (the submitter's value wins, as in
// Slurm); NONE and NIL keep only SLURM_*; a list keeps SLURM_* and the
// listed variables (their given value, else the submitter's, skipped when
// unset).
func (e Export) Apply(submit map[string]string) map[string]string {
	out := map[string]string{}
	if e.Mode == ExportAll || e.Mode == "" {
		maps.Copy(out, submit)
	} else {
		for k, v := range submit {
			if strings.HasPrefix(k, "SLURM_") {
				out[k] = v
			}
		}
	}
	for _, v := range e.Vars {
		cur, present := submit[v.Name]
		switch {
		case e.Mode == ExportAll && present:
		case v.HasValue:
			out[v.Name] = v.Value
		case present:
			out[v.Name] = cur
		}
	}
	return out
}
