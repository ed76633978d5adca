package config

import (
	"slices"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/policy"
)

// Partition returns the partition named name.
func (c *Cluster) Partition(name string) (*Partition, bool) {
	for i := range c.Partitions {
		if c.Partitions[i].Name == name {
			return &c.Partitions[i], true
		}
	}
	return nil, false
}

// DefaultPartition returns the default partition (the first, unless one is marked).
func (c *Cluster) DefaultPartition() *Partition {
	for i := range c.Partitions {
		if c.Partitions[i].Default {
			return &c.Partitions[i]
		}
	}
	return &c.Partitions[0]
}

// NodeNames returns every node the file names (partitions and node sets), sorted.
func (c *Cluster) NodeNames() []string {
	seen := map[string]bool{}
	var out []string
	add := func(names []string) {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	for _, p := range c.Partitions {
		add(p.NodeNames)
	}
	for _, s := range c.NodeSets {
		add(s.NodeNames)
	}
	slices.Sort(out)
	return out
}

// NodeSpec merges what every node set says about one node: features
// (union) and expectations (the last set that states one wins).
func (c *Cluster) NodeSpec(name string) NodeSet {
	out := NodeSet{Names: name, NodeNames: []string{name}}
	for _, s := range c.NodeSets {
		if !slices.Contains(s.NodeNames, name) {
			continue
		}
		for _, f := range s.Features {
			if !slices.Contains(out.Features, f) {
				out.Features = append(out.Features, f)
			}
		}
		if s.CPUs > 0 {
			out.CPUs = s.CPUs
		}
		if s.MemoryMB > 0 {
			out.MemoryMB = s.MemoryMB
		}
		if s.GPUs > 0 {
			out.GPUs, out.GPUType = s.GPUs, s.GPUType
		}
	}
	return out
}

// PartitionsOf returns the partitions that hold a node.
func (c *Cluster) PartitionsOf(node string) []string {
	var out []string
	for _, p := range c.Partitions {
		if slices.Contains(p.NodeNames, node) {
			out = append(out, p.Name)
		}
	}
	return out
}

// IsAdmin reports whether the file lists user as an admin.
func (c *Cluster) IsAdmin(user string) bool { return slices.Contains(c.Admins, user) }

// IsOperator reports whether the file lists user as an operator or admin.
func (c *Cluster) IsOperator(user string) bool {
	return c.IsAdmin(user) || slices.Contains(c.Operators, user)
}

// UserAccounts returns the accounts that list user, in file order (the
// first is the user's default account).
func (c *Cluster) UserAccounts(user string) []string {
	var out []string
	for _, a := range c.Accounts {
		for _, u := range a.Users {
			if u.Name == user {
				out = append(out, a.Name)
			}
		}
	}
	return out
}

// HasQOS reports whether a QOS is configured.
func (c *Cluster) HasQOS(name string) bool {
	return slices.ContainsFunc(c.QOS, func(q QOS) bool { return q.Name == name })
}

// Associations returns the account tree for fair-share: accounts keyed by
// name, users as "account/user".
func (c *Cluster) Associations() []policy.Association {
	var out []policy.Association
	for _, a := range c.Accounts {
		out = append(out, policy.Association{Key: a.Name, Parent: a.Parent, Shares: a.Shares})
		for _, u := range a.Users {
			out = append(out, policy.Association{Key: a.Name + "/" + u.Name, Parent: a.Name, Shares: u.Shares, User: true, SharesParent: u.SharesParent})
		}
	}
	return out
}

// CorePartitions converts the partitions for the scheduling core.
func (c *Cluster) CorePartitions() []core.Partition {
	out := make([]core.Partition, len(c.Partitions))
	for i, p := range c.Partitions {
		out[i] = core.Partition{Name: p.Name, Nodes: p.NodeNames, PriorityTier: p.PriorityTier, PriorityJobFactor: p.PriorityJobFactor,
			DefaultTime: p.DefaultTime, MaxTime: p.MaxTime, MinNodes: p.MinNodes, MaxNodes: p.MaxNodes, DefMemPerCPU: p.DefMemPerCPU,
			Down: p.Down || p.State == "DOWN" || p.State == "INACTIVE", AllowAccounts: p.AllowAccounts, DenyAccounts: p.DenyAccounts,
			AllowQOS: p.AllowQOS, DenyQOS: p.DenyQOS, Exclusive: p.OverSubscribe == "EXCLUSIVE"}
	}
	return out
}

// CoreQOS converts the QOS list.
func (c *Cluster) CoreQOS() []core.QOS {
	out := make([]core.QOS, len(c.QOS))
	for i, q := range c.QOS {
		out[i] = core.QOS{Name: q.Name, Priority: q.Priority, MaxGPUsPerUser: q.MaxGPUsPerUser, Preempt: q.Preempt,
			PreemptMode: core.PreemptMode(q.PreemptMode), GraceTime: q.GraceTime}
	}
	return out
}

// CoreConfig converts priority and scheduler options for the core.
func (c *Cluster) CoreConfig() core.Config {
	cfg := core.DefaultConfig()
	pr := c.Priority
	cfg.Priority.Weights = policy.Weights{Age: pr.Age, FairShare: pr.FairShare, JobSize: pr.JobSize, Partition: pr.Partition, QOS: pr.QOS, TRES: pr.TRES}
	cfg.Priority.MaxAge, cfg.Priority.HalfLife, cfg.Priority.FavorSmall, cfg.Priority.FairShare = pr.MaxAge, pr.HalfLife, pr.FavorSmall, pr.FairShareAlgo
	s := c.Scheduler
	cfg.Backfill = core.BackfillMode(s.Backfill)
	if s.ReservePerPartition > 0 {
		cfg.ReservePerPartition = s.ReservePerPartition
	}
	cfg.MaxReservations, cfg.Window = s.MaxReservations, s.Window
	if s.CandidateLimit > 0 {
		cfg.CandidateLimit = s.CandidateLimit
	}
	if c.Limits != nil {
		cfg.Limits = append(cfg.Limits, core.PolicyLimiter(c.Limits))
	}
	cfg.Preempt = core.PreemptConfig{Type: core.PreemptType(s.PreemptType), Mode: core.PreemptMode(s.PreemptMode),
		GraceTime: s.PreemptGraceTime, ExemptTime: s.PreemptExemptTime}
	return cfg
}
