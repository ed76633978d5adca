package format

import (
	"fmt"
	"slices"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// jobStates pairs Slurm's long job state names with squeue's compact codes.
var jobStates = [][2]string{
	{"PENDING", "PD"}, {"RUNNING", "R"}, {"COMPLETING", "CG"}, {"COMPLETED", "CD"},
	{"FAILED", "F"}, {"CANCELLED", "CA"}, {"TIMEOUT", "TO"}, {"NODE_FAIL", "NF"},
	{"PREEMPTED", "PR"}, {"OUT_OF_MEMORY", "OOM"}, {"DEADLINE", "DL"}, {"REQUEUED", "RQ"},
	{"BOOT_FAIL", "BF"}, {"CONFIGURING", "CF"}, {"SUSPENDED", "S"}, {"STOPPED", "ST"},
	{"REQUEUE_HOLD", "RH"}, {"SPECIAL_EXIT", "SE"}, {"RESV_DEL_HOLD", "RD"},
	{"REQUEUE_FED", "RF"}, {"REVOKED", "RV"}, {"RESIZING", "RS"}, {"SIGNALING", "SI"},
	{"STAGE_OUT", "SO"},
}

// CompactState returns squeue's short code for a long job state name
// ("PENDING" -> "PD"); an unknown name is returned as it is.
func CompactState(long string) string {
	for _, s := range jobStates {
		if strings.EqualFold(s[0], long) {
			return s[1]
		}
	}
	return long
}

// JobState is the state squeue shows for a job: its state, except that a
// completing job on its way back to the queue shows as REQUEUED.
func JobState(j *pb.Job) string {
	if j.GetState() == "COMPLETING" && j.GetRequeuePending() {
		return "REQUEUED"
	}
	return j.GetState()
}

// ParseJobStates reads squeue -t / scancel -t values: long or compact
// names in any case, comma-separated, or "all". It returns the long names,
// or all=true.
func ParseJobStates(values []string) (states []string, all bool, err error) {
	for _, v := range SplitList(values) {
		if strings.EqualFold(v, "all") {
			return nil, true, nil
		}
		found := ""
		for _, s := range jobStates {
			if strings.EqualFold(v, s[0]) || strings.EqualFold(v, s[1]) {
				found = s[0]
			}
		}
		if found == "" {
			return nil, false, fmt.Errorf("invalid job state specified: %s", v)
		}
		if !slices.Contains(states, found) {
			states = append(states, found)
		}
	}
	return states, false, nil
}

// SplitList splits comma-separated option values ("-u a,b -u c") into
// their items, dropping empty ones.
func SplitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// nodeLongStates maps sinfo's compact node states to the long forms (%T),
// lower case as sinfo prints them (scontrol's State= stays upper case).
var nodeLongStates = map[string]string{
	"idle": "idle", "mix": "mixed", "alloc": "allocated", "drng": "draining", "drain": "drained",
	"down": "down", "unk": "unknown", "comp": "completing", "fail": "fail", "failg": "failing",
	"maint": "maint", "resv": "reserved", "plnd": "planned", "futr": "future", "inval": "inval",
}

// NodeState is sinfo's one-word compact state (%t): the controller's
// display state, or derived from base state and flags when it sent none
// (DRAIN on a busy node is drng, otherwise drain; "*" when not responding).
func NodeState(n *pb.Node) string {
	if s := n.GetDisplayState(); s != "" {
		return s
	}
	base := strings.ToUpper(n.GetState())
	s := map[string]string{"IDLE": "idle", "MIXED": "mix", "ALLOCATED": "alloc", "DOWN": "down", "UNKNOWN": "unk"}[base]
	if s == "" {
		s = strings.ToLower(base)
	}
	if slices.Contains(n.GetFlags(), "DRAIN") {
		s = "drain"
		if base == "MIXED" || base == "ALLOCATED" {
			s = "drng"
		}
	}
	if slices.Contains(n.GetFlags(), "NOT_RESPONDING") {
		s += "*"
	}
	return s
}

// NodeStateLong is sinfo's long state (%T): "draining", "idle*".
func NodeStateLong(n *pb.Node) string {
	s := NodeState(n)
	base, suffix := s, ""
	if i := strings.IndexAny(s, "*~#!%$@^-"); i > 0 {
		base, suffix = s[:i], s[i:]
	}
	if l, ok := nodeLongStates[base]; ok {
		return l + suffix
	}
	return strings.ToLower(s)
}

// Slurm's numeric node_state: a base state in the low bits and flag bits
// above it. sinfo sorts its lines by this number, so Parity computes it to
// order rows the same way.
const (
	slurmUnknown   = 0
	slurmDown      = 1
	slurmIdle      = 2
	slurmAllocated = 3
	slurmMixed     = 5
	slurmFuture    = 6
)

var slurmBaseStates = map[string]int{
	"UNKNOWN": slurmUnknown, "DOWN": slurmDown, "IDLE": slurmIdle, "ALLOCATED": slurmAllocated,
	"MIXED": slurmMixed, "FUTURE": slurmFuture,
}

var slurmStateFlags = map[string]int{
	"RESERVED": 0x20, "DRAIN": 0x200, "COMPLETING": 0x400, "NOT_RESPONDING": 0x800,
	"NO_RESPOND": 0x800, "FAIL": 0x2000, "MAINT": 0x8000,
	// NODE_STATE_PLANNED: a node backfill holds for a pending job; the bit
	// sorts a planned group before a mixed one, as the anchor's sinfo.
	"PLANNED": 0x200000,
}

// slurmNodeState is the node's state as Slurm's node_state number: base
// state (a partly used node counts as mixed, as sinfo makes it) or'ed
// with the flag bits.
func slurmNodeState(n *pb.Node) int {
	base := strings.ToUpper(n.GetState())
	v := slurmBaseStates[base]
	alloc := n.GetAllocCpus()
	partly := alloc > 0 && alloc < n.GetCpus() && (base == "IDLE" || base == "ALLOCATED")
	if partly || strings.HasPrefix(n.GetDisplayState(), "mix") {
		v = slurmMixed
	}
	for _, f := range n.GetFlags() {
		v |= slurmStateFlags[strings.ToUpper(f)]
	}
	// The controller marks a node that never registered with "*" in its
	// display state only; Slurm sets NOT_RESPONDING on such a node.
	if strings.HasSuffix(NodeState(n), "*") {
		v |= slurmStateFlags["NOT_RESPONDING"]
	}
	return v
}

// NodeStateFull is scontrol's State=: the base state and every flag joined
// with "+" ("IDLE+DRAIN", "DOWN+NOT_RESPONDING").
func NodeStateFull(n *pb.Node) string {
	return strings.Join(append([]string{strings.ToUpper(n.GetState())}, n.GetFlags()...), "+")
}

// NodeMatchesState reports whether a node is in one of sinfo -t's states
// (compact or long, any case; "drain" matches DRAINED and DRAINING, as in
// Slurm; "~" inverts one entry).
func NodeMatchesState(n *pb.Node, wanted []string) bool {
	if len(wanted) == 0 {
		return true
	}
	short := strings.TrimRight(NodeState(n), "*~#!%$@^-")
	long := strings.TrimRight(NodeStateLong(n), "*~#!%$@^-")
	have := []string{short, long, strings.ToUpper(n.GetState())}
	have = append(have, n.GetFlags()...)
	if slices.Contains(n.GetFlags(), "NOT_RESPONDING") {
		have = append(have, "NO_RESPOND")
	}
	match := func(w string) bool {
		for _, h := range have {
			if strings.EqualFold(h, w) {
				return true
			}
		}
		return false
	}
	for _, w := range wanted {
		if neg, ok := strings.CutPrefix(w, "~"); ok {
			if !match(neg) {
				return true
			}
		} else if match(w) {
			return true
		}
	}
	return false
}
