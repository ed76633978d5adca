package cluster

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/parityhpc/parity/labs/labfile"
)

// ExemptAccount is the lab account whose jobs idle-GPU reclamation leaves alone.
const ExemptAccount = "lab-exempt"

// PreemptQOS is the QOS of a lab started with Options.Preemption whose
// jobs may preempt jobs of the default QOS (cancelling them at once), so
// preemption can be watched end to end.
const PreemptQOS = "lab-preempt"

// configChoices are the lab options that change its cluster configuration.
type configChoices struct {
	preempt    bool // Options.Preemption
	noAccounts bool // Options.NoAccounts
	// controllers lists the replicated controllers' addresses (nil: one).
	controllers []string
}

// controllerYAML renders the lab as a cluster configuration, so a lab's
// controller reads exactly what an operator's would. preempt adds the
// preempting QOS (see PreemptQOS); noAccounts leaves out the accounts
// (and so the reclaimer's exempt one).
func controllerYAML(lab *labfile.Lab, stateDir string, admins, users []string, ch configChoices) string {
	preempt := ch.preempt
	var b strings.Builder
	fmt.Fprintf(&b, "cluster: %s\n", lab.Name)
	fmt.Fprintf(&b, "controller:\n  listen: 127.0.0.1:0\n  stateDir: %q\n", stateDir)
	if len(ch.controllers) > 1 {
		fmt.Fprintf(&b, "controllers: [%s]\n", strings.Join(ch.controllers, ", "))
	}
	fmt.Fprintf(&b, "admins: [%s]\n", strings.Join(quoteAll(admins), ", "))
	b.WriteString("heartbeatInterval: 1s\nnodeDownTimeout: 30s\nrequeueOnNodeFail: true\n")
	// Benchmarks and chaos trials queue more than Slurm's default 10000;
	// the Slurm anchor they are compared with sets MaxJobCount=200000.
	b.WriteString("maxJobCount: 200000\n")
	b.WriteString("scheduler:\n  interval: 1s\n")
	if preempt {
		// Only jobs that ask for PreemptQOS preempt. Opt-in, because a
		// cluster that defines QOS refuses a --qos it does not know,
		// where one without QOS ignores it (as Slurm without accounting).
		b.WriteString("  preemptType: qos\n  preemptMode: cancel\n")
		fmt.Fprintf(&b, "qos:\n  - name: normal\n  - name: %s\n    priority: 100\n    preempt: [normal]\n", PreemptQOS)
	}
	if ws := lab.Priority.Weights(); len(ws) > 0 {
		b.WriteString("priority:\n  weights:\n")
		for _, name := range slices.Sorted(maps.Keys(ws)) {
			fmt.Fprintf(&b, "    %s: %v\n", name, ws[name])
		}
	}
	us := strings.Join(quoteAll(users), ", ")
	exempt := ""
	if !ch.noAccounts {
		fmt.Fprintf(&b, "accounts:\n  - name: lab\n    users: [%s]\n  - name: %s\n    users: [%s]\n", us, ExemptAccount, us)
		exempt = ExemptAccount
	}
	// A lab acts on idle GPUs within seconds, not hours, so the
	// reclamation ladder can be watched end to end.
	fmt.Fprintf(&b, "reclamation:\n  enabled: true\n  dryRun: false\n  idleFor: 20s\n  grace: 15s\n  minRuntime: 0s\n  action: cancel\n  exemptAccounts: [%s]\n", exempt)
	b.WriteString("nodes:\n")
	for _, ns := range lab.Nodes {
		fmt.Fprintf(&b, "  - names: %q\n", ns.Names)
		if len(ns.Features) > 0 {
			fmt.Fprintf(&b, "    features: [%s]\n", strings.Join(quoteAll(ns.Features), ", "))
		}
	}
	parts := lab.Partitions
	if len(parts) == 0 {
		var all []string
		for _, ns := range lab.Nodes {
			all = append(all, ns.Names)
		}
		parts = []labfile.Partition{{Name: "all", Nodes: strings.Join(all, ","), Default: true}}
	}
	b.WriteString("partitions:\n")
	for _, p := range parts {
		fmt.Fprintf(&b, "  - name: %q\n    nodes: %q\n", p.Name, p.Nodes)
		if p.Default {
			b.WriteString("    default: true\n")
		}
		if p.MaxTime != "" {
			fmt.Fprintf(&b, "    maxTime: %q\n", p.MaxTime)
		}
		if p.BillingWeights != "" {
			fmt.Fprintf(&b, "    billingWeights: %q\n", p.BillingWeights)
		}
	}
	return b.String()
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}
