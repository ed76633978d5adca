package userverbs

import (
	"fmt"
	"slices"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// acctmgrSummary is what sacctmgr prints for a change, in Slurm 22.05's
// layout (testdata/slurm2205_sacctmgr.txt): changed lists the names, or
// "user/account" for user associations.
func acctmgrSummary(a *acctmgrArgs, changed []string, tab *pb.AssocTable) string {
	var b strings.Builder
	cl := tab.GetCluster()
	switch a.entity + " " + a.verb {
	case "account add":
		b.WriteString(" Adding Account(s)\n")
		listNames(&b, changed)
		descr, org := settingOf(a.set, "description", "descr"), settingOf(a.set, "organization", "org")
		b.WriteString(" Settings\n")
		fmt.Fprintf(&b, "  %-16s= %s\n", "Description", orText(descr, "Account Name"))
		fmt.Fprintf(&b, "  %-16s= %s\n", "Organization", orText(org, "Parent/Account Name"))
		b.WriteString(" Associations\n")
		for _, n := range changed {
			fmt.Fprintf(&b, "  A = %-10.10s C = %-10.10s\n", n, cl)
		}
		if lines := assocSettings(a.set, false); len(lines) > 0 {
			b.WriteString(" Settings\n")
			if settingOf(a.set, "parent") == "" {
				lines = append(lines, [2]string{"Parent", "root"})
			}
			writeSettings(&b, lines, 14)
		}
	case "user add":
		b.WriteString(" Adding User(s)\n")
		listNames(&b, userNames(changed))
		if def := settingOf(a.set, "defaultaccount", "defaultacct"); def != "" {
			fmt.Fprintf(&b, " Settings =\n  Default Account = %s\n", def)
		}
		b.WriteString(" Associations =\n")
		for _, ua := range sortedAssocs(changed) {
			fmt.Fprintf(&b, "  U = %-9.9s A = %-10.10s C = %-10.10s\n", ua[0], ua[1], cl)
		}
		b.WriteString(" Non Default Settings\n")
		writeSettings(&b, assocSettings(a.set, true), 14)
	case "qos add":
		b.WriteString(" Adding QOS(s)\n")
		listNames(&b, changed)
		b.WriteString(" Settings\n")
		for _, n := range changed {
			fmt.Fprintf(&b, "  %-15s= %s\n", "Description", n)
		}
		for _, kv := range qosSettings(a.set) {
			if kv[0] == "MaxJobsPerUser" {
				fmt.Fprintf(&b, "  %s = %s\n", kv[0], kv[1]) // Slurm's own spacing for this one
				continue
			}
			fmt.Fprintf(&b, "  %-25s= %s\n", kv[0], kv[1])
		}
	case "account modify":
		b.WriteString(" Modified account associations...\n")
		for _, n := range changed {
			fmt.Fprintf(&b, "  C = %-10.10s A = %s of %s\n", cl, n, orText(accountOf(tab, n).GetParent(), "root"))
			if !reachesUsers(a.set) {
				continue
			}
			for _, u := range accountOf(tab, n).GetUsers() {
				fmt.Fprintf(&b, "  C = %-10.10s A = %-20.20s U = %-9.9s\n", cl, n, u.GetName())
			}
		}
	case "user modify":
		users := slices.DeleteFunc(slices.Clone(changed), func(c string) bool { return strings.Contains(c, "/") })
		if len(users) > 0 {
			b.WriteString(" Modified users...\n")
			listNames(&b, users)
		}
		assocs := slices.DeleteFunc(slices.Clone(changed), func(c string) bool { return !strings.Contains(c, "/") })
		if len(assocs) > 0 {
			b.WriteString(" Modified user associations...\n")
		}
		for _, ua := range sortedAssocs(assocs) {
			fmt.Fprintf(&b, "  C = %-10.10s A = %-20.20s U = %-9.9s\n", cl, ua[1], ua[0])
		}
	case "qos modify":
		b.WriteString(" Modified qos...\n")
		listNames(&b, changed)
	case "account delete":
		b.WriteString(" Deleting accounts...\n")
		listNames(&b, changed)
	case "user delete":
		if hasCond(a.where, "account", "accounts") {
			b.WriteString(" Deleting user associations...\n")
			for _, ua := range sortedAssocs(changed) {
				fmt.Fprintf(&b, "  C = %-10.10s A = %-10.10s U = %-9.9s\n", cl, ua[1], ua[0])
			}
			break
		}
		b.WriteString(" Deleting users...\n")
		names := userNames(changed)
		slices.Sort(names)
		listNames(&b, names)
	case "qos delete":
		b.WriteString(" Deleting QOS(s)...\n")
		listNames(&b, changed)
	}
	return b.String()
}

// reachesUsers reports an account modify that changes its user
// associations too, which Slurm then lists: a limit or a QOS list
// (fairshare, description and the like are the account's own).
func reachesUsers(set []string) bool {
	for _, w := range set {
		k, _, _ := strings.Cut(w, "=")
		switch strings.TrimRight(strings.ToLower(k), "+-") {
		case "fairshare", "shares", "description", "descr", "organization", "org", "parent":
		default:
			return true
		}
	}
	return false
}

func listNames(b *strings.Builder, names []string) {
	for _, n := range names {
		fmt.Fprintf(b, "  %s\n", n)
	}
}

func writeSettings(b *strings.Builder, lines [][2]string, width int) {
	for _, kv := range lines {
		fmt.Fprintf(b, "  %-*s= %s\n", width, kv[0], kv[1])
	}
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// settingOf is the value of the first KEY=VALUE whose key is one of keys.
func settingOf(set []string, keys ...string) string {
	for _, w := range set {
		if k, v, ok := strings.Cut(w, "="); ok && slices.Contains(keys, strings.ToLower(k)) {
			return v
		}
	}
	return ""
}

func hasCond(where []string, keys ...string) bool { return settingOf(where, keys...) != "" }

// limitNames are sacctmgr's names for the limits in its summaries:
// associations' (assoc) and QOS's (qos), keyed by every spelling.
var limitNames = []struct {
	keys       []string
	assoc, qos string
}{
	{[]string{"grptres"}, "GrpTRES", "GrpTRES"},
	{[]string{"maxtres", "maxtresperjob", "maxtrespj"}, "MaxTRES", "MaxTRESPerJob"},
	{[]string{"maxtrespernode", "maxtrespn"}, "MaxTRESPerNode", "MaxTRESPerNode"},
	{[]string{"maxtresperuser", "maxtrespu"}, "MaxTRESPerUser", "MaxTRESPerUser"},
	{[]string{"maxtresperaccount", "maxtrespa"}, "MaxTRESPerAccount", "MaxTRESPerAccount"},
	{[]string{"maxjobs", "maxjobsperuser", "maxjobspu"}, "MaxJobs", "MaxJobsPerUser"},
	{[]string{"maxjobsperaccount", "maxjobspa"}, "MaxJobsPerAccount", "MaxJobsPerAccount"},
	{[]string{"maxsubmitjobs", "maxsubmit", "maxsubmitjobsperuser", "maxsubmitpu"}, "MaxSubmitJobs", "MaxSubmitJobsPerUser"},
	{[]string{"maxsubmitjobsperaccount", "maxsubmitpa"}, "MaxSubmitJobsPerAccount", "MaxSubmitJobsPerAccount"},
	{[]string{"grpjobs"}, "GrpJobs", "GrpJobs"},
	{[]string{"grpsubmitjobs", "grpsubmit"}, "GrpSubmitJobs", "GrpSubmitJobs"},
	{[]string{"maxwall", "maxwalldurationperjob"}, "MaxWall", "MaxWall"},
	{[]string{"fairshare", "shares"}, "Fairshare", ""},
	{[]string{"parent"}, "Parent", ""},
	{[]string{"description", "descr", "organization", "org", "defaultaccount", "defaultacct", "account", "accounts"}, "", ""},
	{[]string{"qos"}, "QOS", ""},
	{[]string{"defaultqos", "defqos"}, "DefQOS", ""},
	{[]string{"priority"}, "", "Priority"},
	{[]string{"flags"}, "", "Flags"},
	{[]string{"preempt"}, "", "Preempt"},
	{[]string{"preemptmode"}, "", "PreemptMode"},
	{[]string{"gracetime"}, "", "GraceTime"},
}

// summarySettings names the settings sacctmgr echoes, sorted by name as
// it prints them.
func summarySettings(set []string, qos bool) [][2]string {
	var out [][2]string
	for _, w := range set {
		k, v, _ := strings.Cut(w, "=")
		for _, l := range limitNames {
			name := l.assoc
			if qos {
				name = l.qos
			}
			if name != "" && slices.Contains(l.keys, strings.ToLower(k)) {
				out = append(out, [2]string{name, v})
			}
		}
	}
	// By name, but DefQOS right after QOS (the anchor: "QOS = q2", then
	// "DefQOS = q2").
	rank := func(n string) string {
		if n == "DefQOS" {
			return "QOS~"
		}
		return n
	}
	slices.SortStableFunc(out, func(a, b [2]string) int { return strings.Compare(rank(a[0]), rank(b[0])) })
	return out
}

// assocSettings are an account's or user's echoed settings (a user's
// account= is where it goes, not a setting).
func assocSettings(set []string, user bool) [][2]string {
	out := summarySettings(set, false)
	if user {
		out = slices.DeleteFunc(out, func(kv [2]string) bool { return kv[0] == "Parent" })
	}
	return out
}

func qosSettings(set []string) [][2]string { return summarySettings(set, true) }

// userNames are the distinct users of "user/account" entries, in order.
func userNames(changed []string) []string {
	var out []string
	for _, c := range changed {
		u, _, _ := strings.Cut(c, "/")
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// sortedAssocs are the "user/account" entries as pairs, by user (in the
// order given) then account name, as sacctmgr lists them.
func sortedAssocs(changed []string) [][2]string {
	users := userNames(changed)
	var out [][2]string
	for _, c := range changed {
		u, acct, _ := strings.Cut(c, "/")
		out = append(out, [2]string{u, acct})
	}
	slices.SortStableFunc(out, func(a, b [2]string) int {
		if d := slices.Index(users, a[0]) - slices.Index(users, b[0]); d != 0 {
			return d
		}
		return strings.Compare(a[1], b[1])
	})
	return out
}

func accountOf(tab *pb.AssocTable, name string) *pb.AssocAccount {
	for _, a := range tab.GetAccounts() {
		if a.GetName() == name {
			return a
		}
	}
	return nil
}
