package jobspec

import (
	"slices"
	"strings"
)

// noteEmpty keeps Request.Empty up to date with one setting: an empty
// value adds its field, any other value removes it, so the last one
// given decides (-A "" -A physics is physics; -A physics -A "" is "").
// -N 0 counts as an empty --nodes. On the anchor an empty --account, --constraint, --exclude, --nodelist
// or --comment prints as Account=, Features=, ExcNodeList=,
// ReqNodeList= and Comment=, where one never given prints (null) or
// nothing.
func (r *Request) noteEmpty(s setting) {
	if s.spec == nil || !printsEmpty(s.spec.field) {
		return
	}
	field := s.spec.field
	i := slices.Index(r.Empty, field)
	v := strings.TrimSpace(s.value)
	switch empty := v == "" || field == "nodes" && v == "0"; {
	case empty && i < 0:
		r.Empty = append(r.Empty, field)
	case !empty && i >= 0:
		r.Empty = slices.Delete(r.Empty, i, i+1)
	}
}

// printsEmpty reports whether Slurm prints field differently empty and
// never given.
func printsEmpty(field string) bool {
	switch field {
	case "account", "constraint", "exclude", "nodeList", "comment", "nodes":
		return true
	}
	return false
}

// GivenEmpty reports whether field (a JSON name) was last given an
// empty value.
func (r *Request) GivenEmpty(field string) bool { return slices.Contains(r.Empty, field) }

// DerivedCounts lists the counts (nodes, ntasks) the user did not give,
// which sbatch derived or defaulted.
func (r *Request) DerivedCounts() []string {
	var out []string
	for _, f := range []string{"nodes", "ntasks"} {
		if !r.Explicit(f) {
			out = append(out, f)
		}
	}
	return out
}

// NTasksDefaulted marks, in a job spec's derived options, a task count no
// option gave (not -n, --ntasks-per-node, --ntasks-per-gpu or --gpus over
// --gpus-per-task): Slurm then sets no SLURM_NTASKS in the job, so srun
// there runs one task a node.
const NTasksDefaulted = "ntasks-defaulted"

// TaskCountDefaulted reports whether no option gave the task count.
func (r *Request) TaskCountDefaulted() bool { return r.Sources["ntasks"] == SourceDefault }
