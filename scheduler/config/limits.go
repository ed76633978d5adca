package config

import (
	"reflect"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
)

// limitWall reads a MaxWall value in the cluster file's duration forms.
func limitWall(s string) (time.Duration, error) {
	d, _, err := ParseDuration(s)
	return d, err
}

// limitSet parses a QOS's or account's "limits" string (sacctmgr
// settings: "MaxJobs=4 GrpTRES=gres/gpu=8"); errors name the path.
func (p *parser) limitSet(path, spec string) policy.LimitSet {
	if spec == "" {
		return policy.LimitSet{}
	}
	set, err := policy.ParseLimitSet(spec, limitWall)
	if err != nil {
		p.errorf(path, "%v", err)
	}
	return set
}

// limits builds the cluster's policy.Limits from the QOS and account
// limits, or leaves it nil when none is set (no limiter in the pass).
func (p *parser) limits(c *Cluster) {
	if len(p.errs) > 0 {
		return
	}
	l, err := c.BuildLimits()
	if err != nil {
		p.errorf("qos", "%v", err)
		return
	}
	c.Limits = l
}

// BuildLimits is the limiter for c's QOS and account limits, nil when
// none is set. The controller calls it again whenever sacctmgr changes
// the accounts or QOS at run time.
func (c *Cluster) BuildLimits() (*policy.Limits, error) {
	var cfg policy.LimitsConfig
	set := false
	for _, q := range c.QOS {
		cfg.QOS = append(cfg.QOS, policy.QOSLimits{Name: q.Name, Limits: q.Limits, DenyOnLimit: q.DenyOnLimit})
		set = set || q.DenyOnLimit || !reflect.ValueOf(q.Limits).IsZero()
	}
	for _, a := range c.Accounts {
		if !reflect.ValueOf(a.Limits).IsZero() {
			cfg.Assocs = append(cfg.Assocs, policy.AssocLimits{Account: a.Name, Limits: a.Limits})
			set = true
		}
		for _, u := range a.Users {
			if !reflect.ValueOf(u.Limits).IsZero() {
				cfg.Assocs = append(cfg.Assocs, policy.AssocLimits{Account: a.Name, User: u.Name, Limits: u.Limits})
				set = true
			}
		}
	}
	if !set {
		return nil, nil
	}
	cfg.Tree = c.Associations()
	return policy.NewLimits(cfg)
}
