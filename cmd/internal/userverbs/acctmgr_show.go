package userverbs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/policy"
)

// acctCol is one sacctmgr show column: its header, default width and the
// format= names (lower case) that pick it.
type acctCol struct {
	header string
	width  int
	names  []string
}

// acctCols are the columns Slurm 22.05's sacctmgr prints, with its
// widths; columns Parity has no value for print empty, as unset ones do.
var acctCols = []acctCol{
	{"Cluster", 10, []string{"cluster"}}, {"Account", 10, []string{"account", "acct"}},
	{"Descr", 20, []string{"description", "descr"}}, {"Org", 20, []string{"organization", "org"}},
	{"ParentName", 10, []string{"parentname", "parent"}}, {"User", 10, []string{"user"}},
	{"Partition", 10, []string{"partition"}}, {"Share", 9, []string{"share", "fairshare", "shares"}},
	{"Priority", 10, []string{"priority"}}, {"GrpJobs", 7, []string{"grpjobs"}}, {"GrpTRES", 13, []string{"grptres"}},
	{"GrpSubmit", 9, []string{"grpsubmit", "grpsubmitjobs"}}, {"GrpWall", 11, []string{"grpwall"}},
	{"GrpTRESMins", 13, []string{"grptresmins"}}, {"MaxJobs", 7, []string{"maxjobs"}},
	{"MaxTRES", 13, []string{"maxtres", "maxtresperjob"}}, {"MaxTRESPerNode", 14, []string{"maxtrespernode"}},
	{"MaxSubmit", 9, []string{"maxsubmit", "maxsubmitjobs"}}, {"MaxWall", 11, []string{"maxwall", "maxwalldurationperjob"}},
	{"MaxTRESMins", 13, []string{"maxtresmins"}}, {"QOS", 20, []string{"qos"}}, {"Def QOS", 9, []string{"defaultqos", "defqos"}},
	{"GrpTRESRunMin", 13, []string{"grptresrunmins", "grptresrunmin"}}, {"Def Acct", 10, []string{"defaultaccount", "defacct"}},
	{"Admin", 9, []string{"adminlevel", "admin"}}, {"GrpNodes", 8, []string{"grpnodes"}}, {"GrpCPUs", 8, []string{"grpcpus"}},
	{"GrpMem", 7, []string{"grpmem"}}, {"GrpCPUMins", 11, []string{"grpcpumins"}}, {"MaxNodes", 8, []string{"maxnodes"}},
	{"MaxCPUs", 8, []string{"maxcpus"}}, {"MaxCPUMins", 11, []string{"maxcpumins"}},
	{"Name", 10, []string{"name"}}, {"GraceTime", 10, []string{"gracetime"}}, {"Preempt", 10, []string{"preempt"}},
	{"PreemptExemptTime", 19, []string{"preemptexempttime"}}, {"PreemptMode", 11, []string{"preemptmode"}},
	{"Flags", 20, []string{"flags"}}, {"UsageThres", 10, []string{"usagethreshold", "usagethres"}},
	{"UsageFactor", 11, []string{"usagefactor"}}, {"MaxTRESPU", 13, []string{"maxtrespu", "maxtresperuser"}},
	{"MaxJobsPU", 9, []string{"maxjobspu", "maxjobsperuser"}}, {"MaxSubmitPU", 11, []string{"maxsubmitpu", "maxsubmitjobsperuser"}},
	{"MaxTRESPA", 13, []string{"maxtrespa", "maxtresperaccount"}}, {"MaxJobsPA", 9, []string{"maxjobspa", "maxjobsperaccount"}},
	{"MaxSubmitPA", 11, []string{"maxsubmitpa", "maxsubmitjobsperaccount"}}, {"MinTRES", 13, []string{"mintres"}},
	{"ControlHost", 15, []string{"controlhost"}}, {"ControlPort", 12, []string{"controlport"}}, {"RPC", 5, []string{"rpc"}},
	{"Type", 8, []string{"type"}}, {"ID", 6, []string{"id"}},
}

// entityWidths are the columns whose default width differs by entity
// (show tres's Name is 15 wide).
var entityWidths = map[string]map[string]int{"tres": {"Name": 15}}

// acctDefaults are sacctmgr show's default formats per entity.
var acctDefaults = map[string]string{
	"account":           "Account,Descr,Org",
	"account withassoc": "Account,Descr,Org,Cluster,ParentName,User,Share,Priority,GrpJobs,GrpNodes,GrpCPUs,GrpMem,GrpSubmit,GrpWall,GrpCPUMins,MaxJobs,MaxNodes,MaxCPUs,MaxSubmit,MaxWall,MaxCPUMins,QOS,DefQOS",
	"user":              "User,DefAcct,Admin",
	"user withassoc":    "User,DefAcct,Admin,Cluster,Account,Partition,Share,Priority,MaxJobs,MaxNodes,MaxCPUs,MaxSubmit,MaxWall,MaxCPUMins,QOS,DefQOS",
	"assoc":             "Cluster,Account,User,Partition,Share,Priority,GrpJobs,GrpTRES,GrpSubmit,GrpWall,GrpTRESMins,MaxJobs,MaxTRES,MaxTRESPerNode,MaxSubmit,MaxWall,MaxTRESMins,QOS,DefQOS,GrpTRESRunMin",
	"cluster":           "Cluster,ControlHost,ControlPort,RPC,Share,GrpJobs,GrpTRES,GrpSubmit,MaxJobs,MaxTRES,MaxSubmit,MaxWall,QOS,DefQOS",
	"tres":              "Type,Name,ID",
	"qos":               "Name,Priority,GraceTime,Preempt,PreemptExemptTime,PreemptMode,Flags%40,UsageThres,UsageFactor,GrpTRES,GrpTRESMins,GrpTRESRunMin,GrpJobs,GrpSubmit,GrpWall,MaxTRES,MaxTRESPerNode,MaxTRESMins,MaxWall,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxTRESPA,MaxJobsPA,MaxSubmitPA,MinTRES",
}

// pickCols resolves format= names (NAME or NAME%WIDTH, any case, a
// unique prefix allowed as sacctmgr allows it).
func pickCols(names []string) ([]acctCol, error) {
	var out []acctCol
	for _, n := range names {
		name, w, hasW := strings.Cut(n, "%")
		key := strings.ToLower(strings.ReplaceAll(name, " ", ""))
		col, ok := findCol(key)
		if !ok {
			return nil, fmt.Errorf("Unknown field '%s'", name)
		}
		if hasW {
			v, err := strconv.Atoi(w)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("format %s: width %q is not a positive number", n, w)
			}
			col.width = v
		}
		out = append(out, col)
	}
	return out, nil
}

func findCol(key string) (acctCol, bool) {
	for _, c := range acctCols {
		if slices.Contains(c.names, key) || strings.EqualFold(strings.ReplaceAll(c.header, " ", ""), key) {
			return c, true
		}
	}
	var hit []acctCol
	for _, c := range acctCols {
		if slices.ContainsFunc(c.names, func(n string) bool { return strings.HasPrefix(n, key) }) {
			hit = append(hit, c)
		}
	}
	if len(hit) == 1 {
		return hit[0], true
	}
	return acctCol{}, false
}

func runAcctmgrShow(cmd *cobra.Command, s *session, a *acctmgrArgs) error {
	if a.entity == "txn" {
		return runAcctmgrTxn(cmd, s, a)
	}
	tab, err := s.c.AssocTable(s.ctx)
	if err != nil {
		return s.fail(err)
	}
	format := a.format
	if len(format) == 0 {
		key := a.entity
		if a.withAssoc && (key == "account" || key == "user") {
			key += " withassoc"
		}
		format = strings.Split(acctDefaults[key], ",")
	}
	cols, err := pickCols(format)
	if err != nil {
		fmt.Fprintln(cmd.OutOrStdout(), " "+err.Error())
		return &exitError{code: 1, err: err, printed: true}
	}
	for i, c := range cols {
		if w, ok := entityWidths[a.entity][c.header]; ok && !strings.Contains(format[i], "%") {
			cols[i].width = w
		}
	}
	rows, err := acctRows(tab, a)
	if err != nil {
		return usageError("sacctmgr", "%v", err)
	}
	fmt.Fprint(cmd.OutOrStdout(), renderAcctTable(cols, rows, a))
	return nil
}

// renderAcctTable lays rows out as sacctmgr does: right-aligned columns
// of their widths, a value too long cut with "+"; -p/-P with '|'.
func renderAcctTable(cols []acctCol, rows []map[string]string, a *acctmgrArgs) string {
	var b strings.Builder
	line := func(cell func(c acctCol) string) {
		for i, c := range cols {
			v := cell(c)
			switch {
			case a.parsed2:
				if i > 0 {
					b.WriteByte('|')
				}
				b.WriteString(v)
			case a.parsable:
				b.WriteString(v + "|")
			default:
				if len(v) > c.width {
					v = v[:c.width-1] + "+"
				}
				fmt.Fprintf(&b, "%*s ", c.width, v)
			}
		}
		b.WriteByte('\n')
	}
	if !a.noHeader {
		line(func(c acctCol) string { return c.header })
		if !a.parsable && !a.parsed2 {
			line(func(c acctCol) string { return strings.Repeat("-", c.width) })
		}
	}
	for _, r := range rows {
		line(func(c acctCol) string { return r[c.header] })
	}
	return b.String()
}

// acctRows builds the entity's rows, filtered by names and conditions.
func acctRows(tab *pb.AssocTable, a *acctmgrArgs) ([]map[string]string, error) {
	f := acctFilter{names: a.names}
	for _, w := range a.where {
		k, v, _ := strings.Cut(w, "=")
		switch strings.ToLower(k) {
		case "name", "names":
			f.names = append(f.names, strings.Split(v, ",")...)
		case "account", "accounts", "acct":
			f.accounts = strings.Split(v, ",")
		case "user", "users":
			f.users = strings.Split(v, ",")
		case "cluster", "clusters":
		case "type", "types":
			f.types = strings.Split(v, ",")
		default:
			return nil, fmt.Errorf("unknown condition %s", w)
		}
	}
	switch a.entity {
	case "qos":
		return qosRows(tab, f), nil
	case "cluster":
		return clusterRows(tab, f), nil
	case "tres":
		return tresRows(tab, f), nil
	case "account":
		return accountRows(tab, f, a.withAssoc), nil
	case "user":
		return userRows(tab, f, a.withAssoc), nil
	}
	return assocRows(tab, f, a.tree), nil
}

type acctFilter struct{ names, accounts, users, types []string }

func in(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }

func qosRows(tab *pb.AssocTable, f acctFilter) []map[string]string {
	var out []map[string]string
	for _, q := range tab.GetQos() {
		if !in(f.names, q.GetName()) {
			continue
		}
		lim, _ := policy.ParseLimitSet(q.GetLimits(), wallOf)
		mode := q.GetPreemptMode()
		if mode == "" {
			mode = "cluster"
		}
		r := map[string]string{"Name": q.GetName(), "Priority": strconv.Itoa(int(q.GetPriority())),
			"GraceTime": policy.FormatWall(secs(q.GetGraceSeconds())), "Preempt": strings.Join(q.GetPreempt(), ","),
			"PreemptMode": mode, "UsageFactor": "1.000000"}
		if q.GetDenyOnLimit() {
			r["Flags"] = "DenyOnLimit"
		}
		for h, name := range map[string]string{"GrpTRES": "GrpTRES", "GrpJobs": "GrpJobs", "GrpSubmit": "GrpSubmitJobs",
			"MaxTRES": "MaxTRES", "MaxTRESPerNode": "MaxTRESPerNode", "MaxWall": "MaxWall", "MaxTRESPU": "MaxTRESPerUser",
			"MaxJobsPU": "MaxJobs", "MaxSubmitPU": "MaxSubmitJobs", "MaxTRESPA": "MaxTRESPerAccount",
			"MaxJobsPA": "MaxJobsPerAccount", "MaxSubmitPA": "MaxSubmitJobsPerAccount"} {
			r[h] = policy.LimitValue(lim, name)
		}
		out = append(out, r)
	}
	return out
}
