package gres

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSyntax is wrapped by every request parsing error.
var ErrSyntax = errors.New("gres: invalid request")

// SyntaxError names the option, the offending value and what is wrong.
type SyntaxError struct {
	Field  string // the option, e.g. "--gres"
	Value  string // the whole value given
	Term   string // the term within it that failed, if any
	Reason string
}

func (e *SyntaxError) Error() string {
	if e.Term != "" && e.Term != e.Value {
		return fmt.Sprintf("%s=%q: term %q: %s", e.Field, e.Value, e.Term, e.Reason)
	}
	return fmt.Sprintf("%s=%q: %s", e.Field, e.Value, e.Reason)
}

func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Request is one term of a GRES request: count devices of a name, optionally
// of one type ("gpu:h100:4").
type Request struct {
	Name  string `json:"name"`
	Type  string `json:"type,omitempty"`
	Count int64  `json:"count"`
}

// String renders the term in Slurm syntax.
func (r Request) String() string {
	if r.Type == "" {
		return fmt.Sprintf("%s:%d", r.Name, r.Count)
	}
	return fmt.Sprintf("%s:%s:%d", r.Name, r.Type, r.Count)
}

// Requests is a comma-separated list of terms.
type Requests []Request

// String renders the list in Slurm syntax ("gpu:h100:4,nic:1").
func (rs Requests) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// Count returns how many devices of name the list asks for (all types).
func (rs Requests) Count(name string) int64 {
	var n int64
	for _, r := range rs {
		if r.Name == name {
			n += r.Count
		}
	}
	return n
}

// maxCount bounds counts so arithmetic on them cannot overflow.
const maxCount = 1 << 40

// ParseGRES parses a --gres value: comma-separated terms
// name[[:type]:count], count defaulting to 1 and taking the K/M/G/T/P
// suffixes (×1024^n). An optional "gres/" prefix (the TRES spelling) is
// accepted. "none" and "" are the empty request.
func ParseGRES(value string) (Requests, error) {
	return parseTerms("--gres", value, false)
}

// ParseGPUs parses the value of --gpus, --gpus-per-node or --gpus-per-task:
// comma-separated [type:]count terms for the "gpu" resource. field names the
// option in errors.
func ParseGPUs(field, value string) (Requests, error) {
	return parseTerms(field, value, true)
}

func parseTerms(field, value string, gpuForm bool) (Requests, error) {
	v := strings.TrimSpace(value)
	if v == "" || (!gpuForm && v == "none") {
		return nil, nil
	}
	var out Requests
	seen := map[string]bool{}
	for _, term := range strings.Split(v, ",") {
		fail := func(reason string, args ...any) error {
			return &SyntaxError{Field: field, Value: value, Term: term, Reason: fmt.Sprintf(reason, args...)}
		}
		var r Request
		var err error
		if gpuForm {
			r, err = parseGPUTerm(term)
		} else {
			r, err = parseGRESTerm(term)
		}
		if err != nil {
			return nil, fail("%v", err)
		}
		key := r.Name + ":" + r.Type
		if seen[key] {
			return nil, fail("%s given more than once", strings.TrimSuffix(key, ":"))
		}
		seen[key] = true
		out = append(out, r)
	}
	return out, nil
}

func parseGRESTerm(term string) (Request, error) {
	term = strings.TrimPrefix(strings.TrimSpace(term), "gres/")
	parts := strings.Split(term, ":")
	if err := checkName(parts[0], "name"); err != nil {
		return Request{}, err
	}
	r := Request{Name: parts[0], Count: 1}
	switch len(parts) {
	case 1:
	case 2:
		// "gpu:4" is a count, "gpu:h100" a type; Slurm decides by whether it parses as a number.
		if n, err := parseCount(parts[1]); err == nil {
			r.Count = n
		} else if looksLikeCount(parts[1]) {
			return Request{}, err
		} else if err := checkName(parts[1], "type"); err != nil {
			return Request{}, err
		} else {
			r.Type = parts[1]
		}
	case 3:
		if err := checkName(parts[1], "type"); err != nil {
			return Request{}, err
		}
		n, err := parseCount(parts[2])
		if err != nil {
			return Request{}, err
		}
		r.Type, r.Count = parts[1], n
	default:
		return Request{}, errors.New("expected name[[:type]:count]")
	}
	return r, nil
}

func parseGPUTerm(term string) (Request, error) {
	term = strings.TrimSpace(term)
	typ, countStr, typed := strings.Cut(term, ":")
	if !typed {
		typ, countStr = "", term
	} else if err := checkName(typ, "type"); err != nil {
		return Request{}, err
	}
	if strings.Contains(countStr, ":") {
		return Request{}, errors.New("expected [type:]count")
	}
	n, err := parseCount(countStr)
	if err != nil {
		return Request{}, err
	}
	return Request{Name: "gpu", Type: typ, Count: n}, nil
}

func checkName(s, what string) error {
	if s == "" {
		return fmt.Errorf("empty %s", what)
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-.+", c)
		if !ok {
			return fmt.Errorf("%s %q has invalid character %q", what, s, c)
		}
	}
	if what == "name" && isDigits(s) {
		return fmt.Errorf("name %q must not be a number", s)
	}
	return nil
}

func isDigits(s string) bool {
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

// looksLikeCount reports whether s is digits with an optional size suffix,
// so "gpu:1P" is a bad count rather than a type named "1P".
func looksLikeCount(s string) bool {
	if s != "" && strings.ContainsRune("kKmMgGtTpP", rune(s[len(s)-1])) {
		s = s[:len(s)-1]
	}
	return isDigits(s)
}

func parseCount(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("empty count")
	}
	mult := int64(1)
	if i := strings.IndexByte("kmgtp", strings.ToLower(s[len(s)-1:])[0]); i >= 0 {
		mult = 1 << (10 * (i + 1))
		s = s[:len(s)-1]
	}
	if !isDigits(s) {
		return 0, fmt.Errorf("count %q is not a non-negative integer", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > maxCount/mult {
		return 0, fmt.Errorf("count %q is too large", s)
	}
	return n * mult, nil
}
