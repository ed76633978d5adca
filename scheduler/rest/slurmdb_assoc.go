package rest

import (
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/config"
)

// assocShort is v0.0.44_assoc_short.
type assocShort struct {
	Account   string `json:"account,omitempty"`
	Cluster   string `json:"cluster,omitempty"`
	Partition string `json:"partition,omitempty"`
	User      string `json:"user"`
	ID        int32  `json:"id,omitempty"`
}

// account is v0.0.44_account.
type account struct {
	Name         string       `json:"name"`
	Description  string       `json:"description"`
	Organization string       `json:"organization"`
	Associations []assocShort `json:"associations"`
	Coordinators []struct{}   `json:"coordinators"`
	Flags        []string     `json:"flags"`
}

// assoc is v0.0.44_assoc.
type assoc struct {
	ID        int32    `json:"id"`
	Account   string   `json:"account"`
	Cluster   string   `json:"cluster"`
	User      string   `json:"user"`
	Parent    string   `json:"parent_account,omitempty"`
	SharesRaw int32    `json:"shares_raw"`
	IsDefault bool     `json:"is_default"`
	QOS       []string `json:"qos"`
	Default   struct {
		QOS string `json:"qos"`
	} `json:"default"`
	Flags []string `json:"flags"`
}

// dbUser is v0.0.44_user.
type dbUser struct {
	Name         string       `json:"name"`
	AdminLevel   []string     `json:"administrator_level"`
	Associations []assocShort `json:"associations"`
	Coordinators []struct{}   `json:"coordinators"`
	Default      struct {
		Account string `json:"account"`
	} `json:"default"`
	Flags []string `json:"flags"`
}

// qosRec is v0.0.44_qos.
type qosRec struct {
	ID          int32    `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Priority    *noVal   `json:"priority"`
	Flags       []string `json:"flags"`
	Preempt     struct {
		List []string `json:"list"`
		Mode []string `json:"mode"`
	} `json:"preempt"`
	Limits *qosLimits `json:"limits"`
}

type accountsResp struct {
	Accounts []*account `json:"accounts"`
	envelope
}

type assocsResp struct {
	Associations []*assoc `json:"associations"`
	envelope
}

type usersResp struct {
	Users []*dbUser `json:"users"`
	envelope
}

type qosResp struct {
	QOS []*qosRec `json:"qos"`
	envelope
}

// accounts lists the accounts (one when name is given), each with its
// users' associations, as sacctmgr show account withassoc does. A
// description and organisation default as sacctmgr's do: the name, and
// the parent for a sub-account.
func (h *Handler) accounts(cfg *config.Cluster, name string) []*account {
	out := []*account{}
	for _, a := range cfg.Accounts {
		if name != "" && a.Name != name {
			continue
		}
		org, descr := a.Name, a.Name
		if a.Parent != "" {
			org = a.Parent
		}
		if a.Organization != "" {
			org = a.Organization
		}
		if a.Description != "" {
			descr = a.Description
		}
		acc := &account{Name: a.Name, Description: descr, Organization: org, Associations: []assocShort{}, Coordinators: []struct{}{}, Flags: []string{}}
		for _, u := range a.Users {
			acc.Associations = append(acc.Associations, assocShort{Account: a.Name, Cluster: h.b.ClusterName, User: u.Name})
		}
		out = append(out, acc)
	}
	return out
}

func serveDBAccounts(h *Handler, c *call) (any, error) {
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	return &accountsResp{Accounts: h.accounts(cfg, "")}, nil
}

// assocFilter is the part of the association query Parity honours.
type assocFilter struct{ accounts, users []string }

// assocs lists the root, account and user associations. A user sees
// every account's and only their own user associations, as Accounting's
// shares do; ids number them in that order, the root first.
func (h *Handler) assocs(c *call, cfg *config.Cluster, f assocFilter) []*assoc {
	grants := cfg.AssocQOS(cfg.Root())
	out := []*assoc{}
	id := int32(1)
	add := func(a *assoc) {
		g, ok := grants[a.Account]
		if a.User != "" {
			g, ok = grants[a.Account+"/"+a.User]
		}
		if !ok {
			g = config.QOSGrant{Allowed: cfg.Root()}
		}
		a.ID, a.Cluster, a.QOS, a.Flags = id, h.b.ClusterName, append([]string{}, g.Allowed...), []string{}
		a.Default.QOS = g.Default
		if a.Default.QOS == "" {
			a.Default.QOS = config.DefaultQOS
		}
		id++
		if len(f.accounts) > 0 && !slices.Contains(f.accounts, a.Account) {
			return
		}
		if len(f.users) > 0 && !slices.Contains(f.users, a.User) {
			return
		}
		if a.User != "" && !c.id.Operator() && a.User != c.id.User {
			return
		}
		out = append(out, a)
	}
	add(&assoc{Account: "root", SharesRaw: 1})
	for _, a := range cfg.Accounts {
		parent := a.Parent
		if parent == "" {
			parent = "root"
		}
		add(&assoc{Account: a.Name, Parent: parent, SharesRaw: shares(a.Shares, false)})
		for _, u := range a.Users {
			add(&assoc{Account: a.Name, User: u.Name, SharesRaw: shares(u.Shares, u.SharesParent), IsDefault: defaultAccount(cfg, u.Name) == a.Name})
		}
	}
	return out
}

// defaultAccount is the user's default: the association marked so
// (sacctmgr DefaultAccount=), else the first account listing them.
func defaultAccount(cfg *config.Cluster, user string) string {
	first := ""
	for _, a := range cfg.Accounts {
		for _, u := range a.Users {
			if u.Name == user && u.Default {
				return a.Name
			}
			if u.Name == user && first == "" {
				first = a.Name
			}
		}
	}
	return first
}

// shares is the raw shares slurmdbd keeps: 1 by default, parent's marker.
func shares(s float64, parent bool) int32 {
	switch {
	case parent:
		return sharesUseParent
	case s == 0:
		return 1
	}
	return int32(s)
}

func serveDBAssociations(h *Handler, c *call) (any, error) {
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	q := c.r.URL.Query()
	return &assocsResp{Associations: h.assocs(c, cfg, assocFilter{accounts: splitList(q.Get("account")), users: splitList(q.Get("user"))})}, nil
}

// users lists the users the associations name, with their admin level
// from the cluster file's admins and operators; a user sees only
// themselves, as in their shares.
func (h *Handler) users(c *call, cfg *config.Cluster, name string) []*dbUser {
	out := []*dbUser{}
	var names []string
	for _, a := range cfg.Accounts {
		for _, u := range a.Users {
			if !slices.Contains(names, u.Name) {
				names = append(names, u.Name)
			}
		}
	}
	for _, n := range append(slices.Clone(cfg.Admins), cfg.Operators...) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range names {
		if (name != "" && n != name) || (!c.id.Operator() && n != c.id.User) {
			continue
		}
		u := &dbUser{Name: n, AdminLevel: []string{"None"}, Associations: []assocShort{}, Coordinators: []struct{}{}, Flags: []string{}}
		switch {
		case cfg.IsAdmin(n):
			u.AdminLevel = []string{"Administrator"}
		case cfg.IsOperator(n):
			u.AdminLevel = []string{"Operator"}
		}
		u.Default.Account = defaultAccount(cfg, n)
		for _, acct := range cfg.UserAccounts(n) {
			u.Associations = append(u.Associations, assocShort{Account: acct, Cluster: h.b.ClusterName, User: n})
		}
		out = append(out, u)
	}
	return out
}

func serveDBUsers(h *Handler, c *call) (any, error) {
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	return &usersResp{Users: h.users(c, cfg, "")}, nil
}

// qosList lists the QOS (one when name is given), numbered from 1 in
// the file's order.
func qosList(cfg *config.Cluster, name string) []*qosRec {
	out := []*qosRec{}
	for i, q := range cfg.QOS {
		if name != "" && q.Name != name {
			continue
		}
		r := &qosRec{ID: int32(i + 1), Name: q.Name, Description: q.Name, Priority: num(int64(q.Priority)), Flags: []string{},
			Limits: newQOSLimits(cfg, q)}
		r.Preempt.List, r.Preempt.Mode = append([]string{}, q.Preempt...), []string{}
		if m := strings.ToUpper(q.PreemptMode); m != "" && slices.Contains([]string{"DISABLED", "SUSPEND", "REQUEUE", "CANCEL", "GANG"}, m) {
			r.Preempt.Mode = []string{m}
		}
		if q.DenyOnLimit {
			r.Flags = append(r.Flags, "DENY_LIMIT")
		}
		out = append(out, r)
	}
	return out
}

func serveDBQOS(h *Handler, c *call) (any, error) {
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	name := c.r.PathValue("qos")
	if name == "" {
		name = c.r.URL.Query().Get("name")
	}
	out := qosList(cfg, name)
	if c.r.PathValue("qos") != "" && len(out) == 0 {
		return nil, status.Errorf(codes.NotFound, "qos %q: no such QOS", name)
	}
	return &qosResp{QOS: out}, nil
}

func serveDBAccount(h *Handler, c *call) (any, error) {
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	name := c.r.PathValue("account_name")
	out := h.accounts(cfg, name)
	if len(out) == 0 {
		return nil, status.Errorf(codes.NotFound, "account %q: no such account", name)
	}
	return &accountsResp{Accounts: out}, nil
}

func serveDBUser(h *Handler, c *call) (any, error) {
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	name := c.r.PathValue("name")
	out := h.users(c, cfg, name)
	if len(out) == 0 {
		return nil, status.Errorf(codes.NotFound, "user %q: no such user", name)
	}
	return &usersResp{Users: out}, nil
}
