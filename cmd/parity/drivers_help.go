package main

import (
	"fmt"
	"strings"

	"github.com/parityhpc/parity/vendors/builtin"
)

// inTreeDriverNames lists the in-tree drivers in words ("a, b and c"),
// from the registry, so help texts name no vendor of their own.
func inTreeDriverNames() string {
	r, err := builtin.Registry()
	if err != nil {
		return "the in-tree drivers"
	}
	names := r.Names()
	switch len(names) {
	case 0:
		return "no in-tree driver"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// inTreeDriverSummaries is one indented line per in-tree driver: its
// name and what it drives, from the registry.
func inTreeDriverSummaries() string {
	r, err := builtin.Registry()
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, reg := range r.Registrations() {
		fmt.Fprintf(&b, "  %-8s %s\n", reg.Name, reg.Summary)
	}
	return b.String()
}
