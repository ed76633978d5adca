package userverbs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/scheduler/policy"
)

func wallOf(s string) (time.Duration, error) { return jobspec.ParseDuration(s) }

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }

// rootAccount is the account every tree hangs from, shown as Slurm shows
// its own root association.
var rootAccount = &pb.AssocAccount{Name: "root", Shares: 1, Description: "default root account", Organization: "root"}

// accountTree is the table's accounts depth first from root: each
// account, then (for associations) its users, then its sub-accounts by
// name, as sacctmgr show association lists them.
func accountTree(tab *pb.AssocTable) (order []*pb.AssocAccount, depth map[string]int) {
	kids := map[string][]*pb.AssocAccount{}
	for _, a := range tab.GetAccounts() {
		p := a.GetParent()
		if p == "" {
			p = "root"
		}
		kids[p] = append(kids[p], a)
	}
	depth = map[string]int{}
	var walk func(a *pb.AssocAccount, d int)
	walk = func(a *pb.AssocAccount, d int) {
		order = append(order, a)
		depth[a.GetName()] = d
		list := kids[a.GetName()]
		slices.SortFunc(list, func(x, y *pb.AssocAccount) int { return strings.Compare(x.GetName(), y.GetName()) })
		for _, k := range list {
			walk(k, d+1)
		}
	}
	walk(rootAccount, 0)
	return order, depth
}

// inherited is an association's limits: its account's, each Max* limit
// not set there taken from the nearest account above that sets it (Slurm
// shows an association's limits so); Grp* limits, which bound an
// account's aggregate, only on the account row itself.
func inherited(tab *pb.AssocTable, name string, user bool) policy.LimitSet {
	var set policy.LimitSet
	if a := accountOf(tab, name); a != nil && !user {
		set, _ = policy.ParseLimitSet(a.GetLimits(), wallOf)
	}
	seen := map[string]bool{}
	for name != "" && !seen[name] {
		seen[name] = true
		a := accountOf(tab, name)
		if a == nil {
			break
		}
		up, _ := policy.ParseLimitSet(a.GetLimits(), wallOf)
		fillUnset(&set, up)
		name = a.GetParent()
	}
	return set
}

func fillUnset(dst *policy.LimitSet, src policy.LimitSet) {
	for _, n := range []string{"MaxTRES", "MaxTRESPerNode", "MaxJobs", "MaxSubmitJobs", "MaxWall"} {
		if policy.LimitValue(*dst, n) == "" {
			if v := policy.LimitValue(src, n); v != "" {
				_ = policy.SetLimit(dst, n, v, wallOf)
			}
		}
	}
}

// assocRow is one association's columns.
func assocRow(tab *pb.AssocTable, a *pb.AssocAccount, user string, share string) map[string]string {
	lim := inherited(tab, a.GetName(), user != "")
	qos, defQOS := assocQOS(tab, a, user)
	if user != "" {
		own, _ := policy.ParseLimitSet(userOf(a, user).GetLimits(), wallOf)
		fillUnset(&own, lim)
		lim = own
	}
	parent := ""
	if user == "" && a != rootAccount {
		parent = orText(a.GetParent(), "root")
	}
	tres := func(t, key string) string {
		set, _ := policy.ParseTRES(policy.LimitValue(lim, t))
		if v, ok := set[key]; ok {
			return policy.FormatTRESValue(key, v)
		}
		return ""
	}
	return map[string]string{"Cluster": tab.GetCluster(), "Account": a.GetName(), "User": user, "ParentName": parent,
		"Share": share, "GrpJobs": policy.LimitValue(lim, "GrpJobs"), "GrpTRES": policy.LimitValue(lim, "GrpTRES"),
		"GrpSubmit": policy.LimitValue(lim, "GrpSubmitJobs"), "MaxJobs": policy.LimitValue(lim, "MaxJobs"),
		"MaxTRES": policy.LimitValue(lim, "MaxTRES"), "MaxTRESPerNode": policy.LimitValue(lim, "MaxTRESPerNode"),
		"MaxSubmit": policy.LimitValue(lim, "MaxSubmitJobs"), "MaxWall": policy.LimitValue(lim, "MaxWall"),
		"GrpCPUs": tres("GrpTRES", "cpu"), "GrpNodes": tres("GrpTRES", "node"), "GrpMem": tres("GrpTRES", "mem"),
		"MaxCPUs": tres("MaxTRES", "cpu"), "MaxNodes": tres("MaxTRES", "node"), "QOS": strings.Join(qos, ","), "Def QOS": defQOS,
		"Descr": orText(a.GetDescription(), a.GetName()), "Org": orText(a.GetOrganization(), orText(a.GetParent(), a.GetName()))}
}

// assocQOS is an association's allowed QOS (by name, as sacctmgr lists
// them) and default, resolved as the controller resolves them: the
// user's own, else the account's, else the nearest account above with
// one, else root's.
func assocQOS(tab *pb.AssocTable, a *pb.AssocAccount, user string) ([]string, string) {
	var list []string
	def := ""
	if u := userOf(a, user); u != nil {
		list, def = u.GetQos(), u.GetDefaultQos()
	}
	seen := map[string]bool{}
	for x := a; x != nil && !seen[x.GetName()]; x = accountOf(tab, x.GetParent()) {
		seen[x.GetName()] = true
		if len(list) == 0 {
			list = x.GetQos()
		}
		if def == "" {
			def = x.GetDefaultQos()
		}
	}
	if len(list) == 0 {
		list = tab.GetRootQos()
	}
	list = slices.Clone(list)
	slices.Sort(list)
	return list, def
}

func userOf(a *pb.AssocAccount, name string) *pb.AssocUser {
	if name == "" {
		return nil
	}
	for _, u := range a.GetUsers() {
		if u.GetName() == name {
			return u
		}
	}
	return nil
}

func shareText(v float64, parent bool) string {
	if parent {
		return "parent"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func assocRows(tab *pb.AssocTable, f acctFilter, tree bool) []map[string]string {
	order, depth := accountTree(tab)
	var out []map[string]string
	indent := func(r map[string]string, d int) map[string]string {
		if tree {
			r["Account"] = strings.Repeat(" ", d) + r["Account"]
		}
		return r
	}
	for _, a := range order {
		if !in(f.accounts, a.GetName()) {
			continue
		}
		if len(f.users) == 0 {
			out = append(out, indent(assocRow(tab, a, "", shareText(a.GetShares(), false)), depth[a.GetName()]))
		}
		users := slices.Clone(a.GetUsers())
		slices.SortFunc(users, func(x, y *pb.AssocUser) int { return strings.Compare(x.GetName(), y.GetName()) })
		for _, u := range users {
			if in(f.users, u.GetName()) && in(f.names, u.GetName()) {
				out = append(out, indent(assocRow(tab, a, u.GetName(), shareText(u.GetShares(), u.GetSharesParent())), depth[a.GetName()]+1))
			}
		}
	}
	return out
}

func accountRows(tab *pb.AssocTable, f acctFilter, withAssoc bool) []map[string]string {
	order, _ := accountTree(tab)
	slices.SortStableFunc(order, func(x, y *pb.AssocAccount) int { return strings.Compare(x.GetName(), y.GetName()) })
	var out []map[string]string
	for _, a := range order {
		if !in(f.names, a.GetName()) || !in(f.accounts, a.GetName()) {
			continue
		}
		out = append(out, assocRow(tab, a, "", shareText(a.GetShares(), false)))
		if !withAssoc {
			continue
		}
		for _, u := range a.GetUsers() {
			r := assocRow(tab, a, u.GetName(), shareText(u.GetShares(), u.GetSharesParent()))
			out = append(out, r)
		}
	}
	return out
}

// userRows: one row per user (by name), or per association withassoc;
// Def Acct is the first account listing the user (the one a job naming
// none is charged to).
func userRows(tab *pb.AssocTable, f acctFilter, withAssoc bool) []map[string]string {
	def := map[string]string{}
	var names []string
	for _, a := range tab.GetAccounts() {
		for _, u := range a.GetUsers() {
			if _, ok := def[u.GetName()]; !ok {
				names = append(names, u.GetName())
			}
			if _, ok := def[u.GetName()]; !ok || u.GetDefault() {
				def[u.GetName()] = a.GetName()
			}
		}
	}
	slices.Sort(names)
	var out []map[string]string
	for _, n := range names {
		if !in(f.names, n) || !in(f.users, n) {
			continue
		}
		base := map[string]string{"User": n, "Def Acct": def[n], "Admin": adminLevel(tab, n)}
		if !withAssoc {
			out = append(out, base)
			continue
		}
		for _, a := range tab.GetAccounts() {
			for _, u := range a.GetUsers() {
				if u.GetName() == n && in(f.accounts, a.GetName()) {
					r := assocRow(tab, a, n, shareText(u.GetShares(), u.GetSharesParent()))
					for k, v := range base {
						r[k] = v
					}
					out = append(out, r)
				}
			}
		}
	}
	return out
}

func adminLevel(tab *pb.AssocTable, user string) string {
	switch {
	case slices.Contains(tab.GetAdmins(), user):
		return "Administrator"
	case slices.Contains(tab.GetOperators(), user):
		return "Operator"
	}
	return "None"
}

// txnActions name the decision log's admin changes as sacctmgr show
// transaction names its actions.
var txnActions = map[string]string{"add": "Add", "modify": "Modify", "delete": "Remove", "create": "Add", "update": "Modify"}

// runAcctmgrTxn is sacctmgr show transaction over the decision log: every
// sacctmgr and scontrol partition change, oldest first, with who made it,
// what it named and what it set (the entity after the change).
func runAcctmgrTxn(cmd *cobra.Command, s *session, a *acctmgrArgs) error {
	evs, err := s.c.Events(s.ctx, &pb.EventsRequest{Kinds: []string{"accounting", "partition"}})
	if err != nil {
		return s.fail(err)
	}
	cols := []acctCol{{"Time", 19, nil}, {"Action", 20, nil}, {"Actor", 10, nil}, {"Where", 20, nil}, {"Info", 20, nil}}
	if len(a.format) > 0 {
		return usageError("sacctmgr", "show transaction: format= is not served (Time, Action, Actor, Where, Info)")
	}
	var rows []map[string]string
	for _, e := range evs {
		verb, entity, _ := strings.Cut(e.GetReason(), " ")
		what := e.GetFields()["changed"]
		if e.GetKind() == "partition" {
			entity, what = "partition", e.GetFields()["partition"]
		}
		if !in(a.names, e.GetActor()) && !in(a.names, what) {
			continue
		}
		var where []string
		for _, n := range strings.Split(what, ",") {
			where = append(where, fmt.Sprintf("name='%s'", n))
		}
		rows = append(rows, map[string]string{"Time": e.GetTime().AsTime().Local().Format("2006-01-02T15:04:05"),
			"Action": txnActions[verb] + " " + txnEntity(entity), "Actor": e.GetActor(), "Where": strings.Join(where, " OR "),
			"Info": "before=" + e.GetFields()["before"] + " after=" + e.GetFields()["after"]})
	}
	fmt.Fprint(cmd.OutOrStdout(), renderAcctTable(cols, rows, a))
	return nil
}

func txnEntity(e string) string {
	switch e {
	case "account":
		return "Accounts"
	case "user":
		return "Users"
	case "qos":
		return "QOS"
	case "partition":
		return "Partition"
	}
	return e
}

// slurmRPC is the protocol version sacctmgr show cluster prints for a
// Slurm 22.05 controller, the release Parity's answers follow.
const slurmRPC = "9728"

// clusterRows is sacctmgr show cluster: the one cluster, with the
// controller's address and the root association's share and QOS.
func clusterRows(tab *pb.AssocTable, f acctFilter) []map[string]string {
	if !in(f.names, tab.GetCluster()) {
		return nil
	}
	qos, def := assocQOS(tab, rootAccount, "")
	port := ""
	if p := tab.GetControlPort(); p > 0 {
		port = strconv.Itoa(int(p))
	}
	return []map[string]string{{"Cluster": tab.GetCluster(), "ControlHost": tab.GetControlHost(), "ControlPort": port,
		"RPC": slurmRPC, "Share": "1", "QOS": strings.Join(qos, ","), "Def QOS": def}}
}

// tresRows is sacctmgr show tres, where type= and names (the TRES name,
// or TYPE/NAME) narrowing it.
func tresRows(tab *pb.AssocTable, f acctFilter) []map[string]string {
	var out []map[string]string
	for _, t := range tab.GetTres() {
		full := t.GetType()
		if t.GetName() != "" {
			full += "/" + t.GetName()
		}
		if !in(f.types, t.GetType()) || (len(f.names) > 0 && !slices.Contains(f.names, t.GetName()) && !slices.Contains(f.names, full)) {
			continue
		}
		out = append(out, map[string]string{"Type": t.GetType(), "Name": t.GetName(), "ID": strconv.Itoa(int(t.GetId()))})
	}
	return out
}
