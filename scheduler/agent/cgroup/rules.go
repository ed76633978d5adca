package cgroup

import (
	"fmt"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/parityhpc/parity/gres"
)

// Any is the wildcard device number.
const Any int64 = -1

// Rule is one device access rule in evaluation order: a later rule
// overrides an earlier one on v2, and on v1 only the default-deny shape
// built by DeviceRules is meaningful (a broad deny followed by a narrower
// allow does not reopen anything there).
type Rule struct {
	Allow  bool
	Type   byte  // 'a' (all), 'c' (char) or 'b' (block)
	Major  int64 // Any for every major
	Minor  int64 // Any for every minor
	Access string
}

func (r Rule) String() string {
	num := func(n int64) string {
		if n == Any {
			return "*"
		}
		return fmt.Sprint(n)
	}
	verb := "deny"
	if r.Allow {
		verb = "allow"
	}
	return fmt.Sprintf("%s %c %s:%s %s", verb, r.Type, num(r.Major), num(r.Minor), r.Access)
}

// basicDevices are the pseudo-devices every shell needs: null, zero, full,
// random, urandom, tty, ptmx and the pty slaves.
var basicDevices = [...]Rule{
	{Allow: true, Type: 'c', Major: 1, Minor: 3, Access: "rwm"},
	{Allow: true, Type: 'c', Major: 1, Minor: 5, Access: "rwm"},
	{Allow: true, Type: 'c', Major: 1, Minor: 7, Access: "rwm"},
	{Allow: true, Type: 'c', Major: 1, Minor: 8, Access: "rwm"},
	{Allow: true, Type: 'c', Major: 1, Minor: 9, Access: "rwm"},
	{Allow: true, Type: 'c', Major: 5, Minor: 0, Access: "rwm"},
	{Allow: true, Type: 'c', Major: 5, Minor: 2, Access: "rwm"},
	{Allow: true, Type: 'c', Major: 136, Minor: Any, Access: "rwm"},
}

// DeviceRules builds a job's allow-list: deny everything first, then allow
// the basic pseudo-devices and read/write on each file the vendor driver
// prepared (duplicates dropped). Default-deny is the one shape that works
// the same on v1 (where exceptions are only ever removed by an exact match)
// and on v2 (where the eBPF filter can only narrow later), so access is
// decided once, at creation.
func DeviceRules(files []gres.DeviceFile) []Rule {
	rules := make([]Rule, 0, 1+len(basicDevices)+len(files))
	rules = append(rules, Rule{Allow: false, Type: 'a', Major: Any, Minor: Any, Access: "rwm"})
	rules = append(rules, basicDevices[:]...)
	seen := map[[2]uint32]bool{}
	for _, f := range files {
		k := [2]uint32{f.Major, f.Minor}
		if seen[k] {
			continue
		}
		seen[k] = true
		rules = append(rules, Rule{Allow: true, Type: 'c', Major: int64(f.Major), Minor: int64(f.Minor), Access: "rw"})
	}
	return rules
}

// specDevices renders rules as OCI device rules. Every number is a non-nil
// pointer (−1 for a wildcard): cgroup2's filter compiler dereferences them.
func specDevices(rules []Rule) []specs.LinuxDeviceCgroup {
	out := make([]specs.LinuxDeviceCgroup, len(rules))
	for i, r := range rules {
		major, minor := r.Major, r.Minor
		out[i] = specs.LinuxDeviceCgroup{Allow: r.Allow, Type: string(r.Type), Major: &major, Minor: &minor, Access: r.Access}
	}
	return out
}
