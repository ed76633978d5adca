package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/policy"
	"github.com/parityhpc/parity/topology"
)

// build checks the raw file and applies defaults; problems go to p.errs.
func (p *parser) build(r *rawCluster) *Cluster {
	c := &Cluster{File: p.file, Name: r.Cluster, Admins: r.Admins, Operators: r.Operators, RequeueOnNodeFail: true}
	if c.Name == "" {
		p.errorf("cluster", "a cluster name is required (cluster: NAME)")
	}
	c.Controller = Controller{Listen: or(r.Controller.Listen, DefaultListen), StateDir: or(r.Controller.StateDir, DefaultStateDir),
		Metrics: r.Controller.Metrics, Peers: p.controllers(r.Controllers)}
	c.Auth.KeyFile = r.Auth.KeyFile
	if c.Auth.KeyFile == "" {
		c.Auth.KeyFile = strings.TrimSuffix(c.Controller.StateDir, "/") + "/cluster.key"
	}
	c.Auth.TokenTTL = p.duration("auth.tokenTTL", r.Auth.TokenTTL, DefaultTokenTTL)
	for i, n := range append(append([]string(nil), r.Admins...), r.Operators...) {
		if strings.TrimSpace(n) == "" {
			field := fmt.Sprintf("admins[%d]", i)
			if i >= len(r.Admins) {
				field = fmt.Sprintf("operators[%d]", i-len(r.Admins))
			}
			p.errorf(field, "empty user name")
		}
	}
	c.NodeDownTimeout = p.duration("nodeDownTimeout", r.NodeDownTimeout, DefaultNodeDownTimeout)
	c.HeartbeatInterval = p.duration("heartbeatInterval", r.HeartbeatInterval, DefaultHeartbeat)
	c.EventRetention = p.duration("eventRetention", r.EventRetention, DefaultEventRetention)
	c.MinJobAge = p.duration("minJobAge", r.MinJobAge, DefaultMinJobAge)
	if r.RequeueOnNodeFail != nil {
		c.RequeueOnNodeFail = *r.RequeueOnNodeFail
	}
	c.JobLimits = p.jobLimits(r)
	if c.HeartbeatInterval <= 0 {
		p.errorf("heartbeatInterval", "must be positive")
	}
	p.partitions(c, r.Partitions)
	p.nodeSets(c, r.Nodes)
	p.accounts(c, r.Accounts, "", "accounts", map[string]bool{})
	if len(p.errs) == 0 && len(c.Accounts) > 0 {
		if _, err := policy.NewAccountTree(c.Associations()); err != nil {
			p.errorf("accounts", "%v", err)
		}
	}
	p.qos(c, r.QOS)
	c.RootQOS = r.RootQOS
	if c.RootQOS == nil {
		c.RootQOS = c.QOSNames()
	}
	if len(p.errs) == 0 {
		if err := c.CheckAssocQOS(c.RootQOS); err != nil {
			p.errorf("accounts", "%v", err)
		}
	}
	p.priority(c, &r.Priority)
	p.scheduler(c, &r.Scheduler)
	p.limits(c)
	c.Health = p.health(&r.Health)
	c.Reclamation = p.reclamation(&r.Reclamation)
	if len(p.errs) == 0 {
		if err := c.CoreConfig().Validate(); err != nil {
			p.errorf("priority", "%v", err)
		}
	}
	return c
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// duration parses an optional duration field; unlimited is not allowed here.
func (p *parser) duration(path, s string, def time.Duration) time.Duration {
	if s == "" {
		return def
	}
	d, unlimited, err := ParseDuration(s)
	if err != nil {
		p.errorf(path, "%v", err)
		return def
	}
	if unlimited {
		p.errorf(path, "%q: must be a finite duration", s)
		return def
	}
	return d
}

func (p *parser) partitions(c *Cluster, raws []rawPartition) {
	if len(raws) == 0 {
		p.errorf("partitions", "at least one partition is required")
		return
	}
	seen := map[string]bool{}
	defaults := 0
	for i, r := range raws {
		at := fmt.Sprintf("partitions[%d]", i)
		pt := Partition{Name: r.Name, Nodes: r.Nodes, Default: r.Default, PriorityTier: orOne(r.PriorityTier),
			PriorityJobFactor: orOne(r.PriorityJobFactor), MinNodes: r.MinNodes, MaxNodes: r.MaxNodes, BillingWeights: r.BillingWeights}
		switch {
		case r.Name == "":
			p.errorf(at+".name", "a partition needs a name")
		case seen[r.Name]:
			p.errorf(at+".name", "partition %q is defined twice", r.Name)
		case strings.ContainsAny(r.Name, " ,:/"):
			p.errorf(at+".name", "%q: partition names cannot contain spaces, commas, colons or slashes", r.Name)
		}
		seen[r.Name] = true
		if r.Nodes == "" {
			p.errorf(at+".nodes", "a partition needs nodes (a hostlist such as gpu[001-128])")
		} else if names, err := topology.ExpandHostlist(r.Nodes); err != nil {
			p.errorf(at+".nodes", "%q is not a hostlist: %v", r.Nodes, err)
		} else {
			pt.NodeNames = names
		}
		if r.MaxTime != "" {
			d, unlimited, err := ParseDuration(r.MaxTime)
			if err != nil {
				p.errorf(at+".maxTime", "%v", err)
			} else if !unlimited {
				pt.MaxTime = d
			}
		}
		if r.DefaultTime != "" {
			d, unlimited, err := ParseDuration(r.DefaultTime)
			if err != nil {
				p.errorf(at+".defaultTime", "%v", err)
			} else if !unlimited {
				pt.DefaultTime = d
			}
		}
		if pt.MaxTime > 0 && pt.DefaultTime > pt.MaxTime {
			p.errorf(at+".defaultTime", "%q exceeds maxTime %q", r.DefaultTime, r.MaxTime)
		}
		if pt.PriorityJobFactor < 0 || pt.PriorityJobFactor > 65533 {
			p.errorf(at+".priorityJobFactor", "%d must be within 0..65533", pt.PriorityJobFactor)
		}
		if pt.PriorityTier < 0 || pt.PriorityTier > 65533 {
			p.errorf(at+".priorityTier", "%d must be within 0..65533", pt.PriorityTier)
		}
		if r.MinNodes < 0 || r.MaxNodes < 0 || (r.MaxNodes > 0 && r.MinNodes > r.MaxNodes) {
			p.errorf(at+".minNodes", "minNodes=%d, maxNodes=%d: need 0 <= minNodes <= maxNodes", r.MinNodes, r.MaxNodes)
		}
		if r.DefMemPerCPU != "" {
			mb, err := ParseMemoryMB(r.DefMemPerCPU)
			if err != nil {
				p.errorf(at+".defMemPerCPU", "%v", err)
			}
			pt.DefMemPerCPU = mb
		}
		switch strings.ToLower(r.State) {
		case "", "up":
		case "down":
			pt.Down = true
		case "inactive":
			pt.Down, pt.State = true, "INACTIVE"
		case "drain":
			pt.State = "DRAIN"
		default:
			p.errorf(at+".state", "%q must be up, down, drain or inactive", r.State)
		}
		pt.AllowAccounts, pt.DenyAccounts, pt.AllowQOS, pt.DenyQOS = r.AllowAccounts, r.DenyAccounts, r.AllowQOS, r.DenyQOS
		switch o := strings.ToUpper(r.OverSubscribe); o {
		case "", "NO", "EXCLUSIVE":
			pt.OverSubscribe = o
		default:
			p.errorf(at+".overSubscribe", "%q must be NO or EXCLUSIVE", r.OverSubscribe)
		}
		if r.BillingWeights != "" {
			if err := checkBillingWeights(r.BillingWeights); err != nil {
				p.errorf(at+".billingWeights", "%v", err)
			}
		}
		if pt.Default {
			defaults++
			if defaults > 1 {
				p.errorf(at+".default", "only one partition may be the default")
			}
		}
		c.Partitions = append(c.Partitions, pt)
	}
	if defaults == 0 {
		c.Partitions[0].Default = true
	}
}

// checkBillingWeights checks TRESBillingWeights with the parser billing
// uses, so what the file accepts is what the controller bills with.
func checkBillingWeights(s string) error {
	_, err := accounting.ParseBillingWeights(s)
	return err
}

func (p *parser) nodeSets(c *Cluster, raws []rawNodeSet) {
	for i, r := range raws {
		at := fmt.Sprintf("nodes[%d]", i)
		ns := NodeSet{Names: r.Names, Features: r.Features, CPUs: r.CPUs, GPUs: r.GPUs, GPUType: strings.ToLower(r.GPUType)}
		names, err := topology.ExpandHostlist(r.Names)
		switch {
		case r.Names == "":
			p.errorf(at+".names", "a node set needs names (a hostlist)")
		case err != nil:
			p.errorf(at+".names", "%q is not a hostlist: %v", r.Names, err)
		default:
			ns.NodeNames = names
		}
		if r.CPUs < 0 {
			p.errorf(at+".cpus", "%d must not be negative", r.CPUs)
		}
		if r.GPUs < 0 {
			p.errorf(at+".gpus", "%d must not be negative", r.GPUs)
		}
		if r.Memory != "" {
			if ns.MemoryMB, err = ParseMemoryMB(r.Memory); err != nil {
				p.errorf(at+".memory", "%v", err)
			}
		}
		for j, f := range r.Features {
			if f == "" || strings.ContainsAny(f, "&|,[]* ") {
				p.errorf(fmt.Sprintf("%s.features[%d]", at, j), "%q is not a feature name", f)
			}
		}
		c.NodeSets = append(c.NodeSets, ns)
	}
}

// orOne is a partition's priority setting, 1 when the file leaves it out
// (as slurm.conf does).
func orOne(v *int) int {
	if v == nil {
		return 1
	}
	return *v
}
