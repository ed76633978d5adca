package config

import (
	"fmt"
	"slices"
)

// QOSNames are the QOS defined, in order: what the root association
// allows when nothing narrows it (cluster.yaml has no root list; every
// QOS it defines is open to every association, as before QOS lists).
func (c *Cluster) QOSNames() []string {
	out := make([]string, 0, len(c.QOS))
	for _, q := range c.QOS {
		out = append(out, q.Name)
	}
	return out
}

// Root is root's QOS list: RootQOS, or every QOS where none was set (a
// Cluster built in code rather than parsed).
func (c *Cluster) Root() []string {
	if c.RootQOS == nil {
		return c.QOSNames()
	}
	return c.RootQOS
}

// QOSGrant is an association's allowed QOS and its default ("" when none
// up the chain names one: the job gets the cluster's default).
type QOSGrant struct {
	Allowed []string
	Default string
}

// Allows reports whether the association may use QOS q.
func (g QOSGrant) Allows(q string) bool { return slices.Contains(g.Allowed, q) }

// AssocQOS is every association's grant as Slurm resolves it, keyed by
// account ("chem") and user association ("chem/alice"): the user's own
// list, else its account's, else the nearest account above that has one,
// else root's; the default likewise. One pass over the table, so a
// 10,000-user table is indexed at each change without a quadratic walk.
func (c *Cluster) AssocQOS(root []string) map[string]QOSGrant {
	if root == nil {
		root = c.QOSNames()
	}
	byName := make(map[string]*Account, len(c.Accounts))
	for i := range c.Accounts {
		byName[c.Accounts[i].Name] = &c.Accounts[i]
	}
	out := make(map[string]QOSGrant, len(c.Accounts))
	var grant func(name string, depth int) QOSGrant
	grant = func(name string, depth int) QOSGrant {
		if g, ok := out[name]; ok {
			return g
		}
		a := byName[name]
		if a == nil || depth > len(c.Accounts) { // unknown, or a cycle the tree check refuses
			return QOSGrant{Allowed: root}
		}
		g := QOSGrant{Allowed: root}
		if a.Parent != "" {
			g = grant(a.Parent, depth+1)
		}
		if a.QOS != nil {
			g.Allowed = a.QOS
		}
		if a.DefaultQOS != "" {
			g.Default = a.DefaultQOS
		}
		out[name] = g
		return g
	}
	for _, a := range c.Accounts {
		g := grant(a.Name, 0)
		for _, u := range a.Users {
			ug := g
			if u.QOS != nil {
				ug.Allowed = u.QOS
			}
			if u.DefaultQOS != "" {
				ug.Default = u.DefaultQOS
			}
			out[a.Name+"/"+u.Name] = ug
		}
	}
	return out
}

// CheckAssocQOS refuses a QOS list or default naming an undefined QOS,
// and a default its association may not use (Slurm: "These associations
// don't have access to their default qos").
func (c *Cluster) CheckAssocQOS(root []string) error {
	check := func(who string, list []string, def string) error {
		for _, q := range list {
			if !c.HasQOS(q) {
				return fmt.Errorf("%s: QOS %q is not defined", who, q)
			}
		}
		if def != "" && !c.HasQOS(def) {
			return fmt.Errorf("%s: default QOS %q is not defined", who, def)
		}
		return nil
	}
	if err := check("root", root, ""); err != nil {
		return err
	}
	idx := c.AssocQOS(root)
	for _, a := range c.Accounts {
		if err := check("account "+a.Name, a.QOS, a.DefaultQOS); err != nil {
			return err
		}
		if g := idx[a.Name]; g.Default != "" && !g.Allows(g.Default) {
			return fmt.Errorf("account %s: default QOS %s is not among the QOS it may use (%v)", a.Name, g.Default, g.Allowed)
		}
		for _, u := range a.Users {
			who := "user " + u.Name + " in account " + a.Name
			if err := check(who, u.QOS, u.DefaultQOS); err != nil {
				return err
			}
			if g := idx[a.Name+"/"+u.Name]; g.Default != "" && !g.Allows(g.Default) {
				return fmt.Errorf("%s: default QOS %s is not among the QOS it may use (%v)", who, g.Default, g.Allowed)
			}
		}
	}
	return nil
}
