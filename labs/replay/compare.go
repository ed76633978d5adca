package replay

import (
	"context"
	"fmt"

	"github.com/parityhpc/parity/labs/trace"
)

// Comparison is several policies replayed on the same trace and lab.
type Comparison struct {
	Trace   TraceInfo `json:"trace"`
	Results []*Result `json:"results"`
}

// Compare replays the trace once per policy with otherwise identical
// options, one after the other (each replay is single-threaded and
// deterministic). Progress, when set, sees each replay in turn.
func Compare(ctx context.Context, tr *trace.Trace, base Options, policies []Policy) (*Comparison, error) {
	if len(policies) == 0 {
		return nil, fmt.Errorf("%w: nothing to compare", ErrOptions)
	}
	c := &Comparison{}
	for _, p := range policies {
		o := base
		o.Policy = p
		r, err := Run(ctx, tr, o)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", p, err)
		}
		c.Trace = r.Trace
		c.Results = append(c.Results, r)
	}
	return c, nil
}

// ParsePolicies reads a comma-separated policy list ("fcfs,easy"); "all"
// or "" means every policy.
func ParsePolicies(s string) ([]Policy, error) {
	if s == "" || s == "all" {
		return Policies(), nil
	}
	var out []Policy
	seen := map[Policy]bool{}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != ',' {
			continue
		}
		p, err := ParsePolicy(s[start:i])
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
		start = i + 1
	}
	return out, nil
}
