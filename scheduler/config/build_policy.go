package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/policy"
)

// accounts flattens the nested account tree, checking names and shares.
func (p *parser) accounts(c *Cluster, raws []rawAccount, parent, at string, seen map[string]bool) {
	for i, r := range raws {
		path := fmt.Sprintf("%s[%d]", at, i)
		switch {
		case r.Name == "":
			p.errorf(path+".name", "an account needs a name")
		case seen[r.Name]:
			p.errorf(path+".name", "account %q is defined twice", r.Name)
		case strings.ContainsAny(r.Name, "/ ,"):
			p.errorf(path+".name", "%q: account names cannot contain slashes, spaces or commas", r.Name)
		}
		seen[r.Name] = true
		par := parent
		if r.Parent != "" {
			if parent != "" && r.Parent != parent {
				p.errorf(path+".parent", "%q contradicts the enclosing account %q", r.Parent, parent)
			}
			par = r.Parent
		}
		if r.Shares < 0 {
			p.errorf(path+".shares", "%v must not be negative", r.Shares)
		}
		a := Account{Name: r.Name, Parent: par, Shares: r.Shares, Limits: p.limitSet(path+".limits", r.Limits),
			Description: r.Description, Organization: r.Organization, QOS: r.QOS, DefaultQOS: r.DefaultQOS}
		users := map[string]bool{}
		for j, u := range r.Users {
			upath := fmt.Sprintf("%s.users[%d]", path, j)
			if u.Name == "" {
				p.errorf(upath, "a user needs a name")
				continue
			}
			if users[u.Name] {
				p.errorf(upath, "user %q is listed twice in account %q", u.Name, r.Name)
			}
			users[u.Name] = true
			usr := User{Name: u.Name, Default: u.Default, QOS: u.QOS, DefaultQOS: u.DefaultQOS,
				Limits: p.limitSet(upath+".limits", u.Limits)}
			switch s := strings.TrimSpace(u.Shares); {
			case s == "":
			case strings.EqualFold(s, "parent"):
				usr.SharesParent = true
			default:
				f, err := strconv.ParseFloat(s, 64)
				if err != nil || f < 0 {
					p.errorf(upath+".shares", "%q must be a non-negative number or parent", s)
				}
				usr.Shares = f
			}
			a.Users = append(a.Users, usr)
		}
		c.Accounts = append(c.Accounts, a)
		p.accounts(c, r.Accounts, r.Name, path+".accounts", seen)
	}
	if at == "accounts" {
		for i, a := range c.Accounts {
			if a.Parent != "" && !seen[a.Parent] {
				p.errorf(fmt.Sprintf("accounts[%d].parent", i), "unknown account %q", a.Parent)
			}
		}
	}
}

func (p *parser) qos(c *Cluster, raws []rawQOS) {
	seen := map[string]bool{}
	for i, r := range raws {
		at := fmt.Sprintf("qos[%d]", i)
		switch {
		case r.Name == "":
			p.errorf(at+".name", "a QOS needs a name")
		case seen[r.Name]:
			p.errorf(at+".name", "QOS %q is defined twice", r.Name)
		}
		seen[r.Name] = true
		if r.Priority < 0 {
			p.errorf(at+".priority", "%d must not be negative", r.Priority)
		}
		if r.MaxGPUsPerUser < 0 {
			p.errorf(at+".maxGPUsPerUser", "%d must not be negative", r.MaxGPUsPerUser)
		}
		c.QOS = append(c.QOS, QOS{Name: r.Name, Priority: r.Priority, MaxGPUsPerUser: r.MaxGPUsPerUser, Preempt: r.Preempt,
			PreemptMode: r.PreemptMode, GraceTime: p.duration(at+".graceTime", r.GraceTime, 0),
			Limits: p.limitSet(at+".limits", r.Limits), DenyOnLimit: r.DenyOnLimit})
	}
	if !seen[DefaultQOS] {
		c.QOS = append(c.QOS, QOS{Name: DefaultQOS})
	}
}

func (p *parser) priority(c *Cluster, r *rawPriority) {
	w := func(path string, v *float64, def float64) float64 {
		if v == nil {
			return def
		}
		if *v < 0 {
			p.errorf(path, "%v must not be negative", *v)
		}
		return *v
	}
	// Defaults make every factor count, as core.DefaultConfig does.
	pr := Priority{
		Age:       w("priority.weights.age", r.Weights.Age, 1000),
		FairShare: w("priority.weights.fairshare", r.Weights.FairShare, 10000),
		JobSize:   w("priority.weights.jobSize", r.Weights.JobSize, 1000),
		Partition: w("priority.weights.partition", r.Weights.Partition, 1000),
		QOS:       w("priority.weights.qos", r.Weights.QOS, 1000),
		TRES:      r.Weights.TRES, FavorSmall: r.FavorSmall,
		MaxAge:        p.duration("priority.maxAge", r.MaxAge, policy.DefaultMaxAge),
		HalfLife:      p.duration("priority.halfLife", r.HalfLife, policy.DefaultHalfLife),
		FairShareAlgo: strings.ToLower(or(r.FairShare, policy.AlgoFairTree)),
	}
	switch pr.FairShareAlgo {
	case policy.AlgoFairTree, policy.AlgoClassic:
	default:
		p.errorf("priority.fairShare", "%q must be fairtree or classic", r.FairShare)
	}
	switch strings.ToLower(r.Billing) {
	case "", "sum":
		pr.Billing = accounting.BillSum
	case "max_tres":
		pr.Billing = accounting.BillMaxTRES
	case "max_tres_gres":
		pr.Billing = accounting.BillMaxTRESGRES
	default:
		p.errorf("priority.billing", "%q must be sum, max_tres or max_tres_gres", r.Billing)
	}
	c.Priority = pr
}

func (p *parser) scheduler(c *Cluster, r *rawScheduler) {
	s := Scheduler{Backfill: strings.ToLower(or(r.Backfill, "easy")), ReservePerPartition: r.ReservePerPartition,
		MaxReservations: r.MaxReservations, CandidateLimit: r.CandidateLimit, KillInvalidDepend: r.KillInvalidDepend,
		Interval:    p.duration("scheduler.interval", r.Interval, DefaultInterval),
		MinInterval: p.duration("scheduler.minInterval", r.MinInterval, DefaultMinInterval),
		Window:      p.duration("scheduler.window", r.Window, 0), PreemptType: r.PreemptType, PreemptMode: r.PreemptMode,
		PreemptGraceTime:  p.duration("scheduler.preemptGraceTime", r.PreemptGraceTime, 0),
		PreemptExemptTime: p.duration("scheduler.preemptExemptTime", r.PreemptExemptTime, 0)}
	switch s.Backfill {
	case "easy", "conservative", "none":
	default:
		p.errorf("scheduler.backfill", "%q must be easy, conservative or none", r.Backfill)
	}
	if s.Interval <= 0 {
		p.errorf("scheduler.interval", "must be positive")
	}
	for _, f := range []struct {
		path string
		v    int
	}{{"scheduler.reservePerPartition", r.ReservePerPartition}, {"scheduler.maxReservations", r.MaxReservations}, {"scheduler.candidateLimit", r.CandidateLimit}} {
		if f.v < 0 {
			p.errorf(f.path, "%d must not be negative", f.v)
		}
	}
	c.Scheduler = s
}
