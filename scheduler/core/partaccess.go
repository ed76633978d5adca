package core

import (
	"fmt"
	"slices"
	"strings"
)

// restricted reports whether any access list is set: the pass asks it
// before denies, so an unrestricted partition costs nothing per job.
func (p *Partition) restricted() bool {
	return len(p.AllowAccounts)+len(p.DenyAccounts)+len(p.AllowQOS)+len(p.DenyQOS) > 0
}

// denies reports whether the partition's AllowAccounts/DenyAccounts or
// AllowQOS/DenyQOS keep j from starting here, with the reason Slurm
// 22.05 shows for it (recorded on the anchor): "Job's account not
// permitted to use this partition (p2 allows root_acct not root)".
func (p *Partition) denies(j *Job) (Reason, bool) {
	if why := listDenies(p.Name, p.AllowAccounts, p.DenyAccounts, j.Account); why != "" {
		return Reason("Job's account not permitted to use this partition (" + why + ")"), true
	}
	if why := listDenies(p.Name, p.AllowQOS, p.DenyQOS, j.QOS); why != "" {
		return Reason("Job's QOS not permitted to use this partition (" + why + ")"), true
	}
	return "", false
}

// listDenies is why an allow or deny list refuses name ("" when it does not).
func listDenies(part string, allow, deny []string, name string) string {
	switch {
	case len(allow) > 0 && !slices.Contains(allow, name):
		return fmt.Sprintf("%s allows %s not %s", part, strings.Join(allow, ","), name)
	case slices.Contains(deny, name):
		return fmt.Sprintf("%s denies %s including %s", part, strings.Join(deny, ","), name)
	}
	return ""
}
