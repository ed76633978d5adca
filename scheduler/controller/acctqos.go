package controller

import (
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/policy"
)

// Per-association QOS (sacctmgr ... set qos=... defaultqos=...): an
// account or user association's allowed list and default, inherited
// from its parent when it has none of its own (config.Cluster.AssocQOS).

// isQOSKey reports the settings that change a QOS list: qos=LIST (+LIST,
// -LIST), and qos+=LIST / qos-=LIST (the key then ends in + or -).
func isQOSKey(k string) bool { return k == "qos" || k == "qos+" || k == "qos-" }

// qosList is a QOS-list setting applied to cur, the association's list
// in force (its own or inherited): a plain list replaces it, +/- add and
// remove. Each name must be a defined QOS (Slurm's refusal otherwise).
func (ch *acctChange) qosList(cur []string, kv setting) ([]string, error) {
	v, mode := kv.v, byte(0)
	if strings.HasSuffix(kv.k, "+") || strings.HasSuffix(kv.k, "-") {
		mode = kv.k[len(kv.k)-1]
	} else if v != "" && (v[0] == '+' || v[0] == '-') {
		mode, v = v[0], v[1:]
	}
	list := splitList(v)
	for _, q := range list {
		if ch.qos(q) < 0 {
			return nil, status.Errorf(codes.InvalidArgument, "sacctmgr: error: You gave a bad qos '%s'. Valid QOS's are %s\n Unknown option: %s\n Use keyword 'where' to modify condition",
				q, strings.Join(ch.qosNames(), ","), kv.raw)
		}
	}
	switch mode {
	case '+':
		out := slices.Clone(cur)
		for _, q := range list {
			if !slices.Contains(out, q) {
				out = append(out, q)
			}
		}
		return sortedQOS(out), nil
	case '-':
		return slices.DeleteFunc(slices.Clone(cur), func(q string) bool { return slices.Contains(list, q) }), nil
	}
	if list == nil {
		list = []string{} // qos= with nothing: an empty list, not "inherit"
	}
	return sortedQOS(list), nil
}

func sortedQOS(l []string) []string { slices.Sort(l); return slices.Compact(l) }

// defaultQOS reads defaultqos=NAME, refused in Slurm's words when NAME
// is no QOS; "" or -1 clears it (the parent's applies again).
func (ch *acctChange) defaultQOS(v string) (string, error) {
	if v == "" || v == "-1" {
		return "", nil
	}
	if ch.qos(v) < 0 {
		return "", status.Errorf(codes.InvalidArgument, "You gave a bad default qos '%s'.  Use 'list qos' to get complete list.", v)
	}
	return v, nil
}

func (ch *acctChange) qosNames() []string {
	return (&config.Cluster{QOS: ch.rec.QOS}).QOSNames()
}

// grant is a user association's QOS in force in the table being
// changed. The index is built once per change: a user association's own
// list changes no other's, so a batch over 10,000 users stays linear.
func (ch *acctChange) grant(key string) config.QOSGrant {
	if ch.grants == nil {
		c := config.Cluster{Accounts: ch.rec.Accounts, QOS: ch.rec.QOS}
		ch.grants = c.AssocQOS(ch.rec.RootQOS)
	}
	if g, ok := ch.grants[key]; ok {
		return g
	}
	acct, _, _ := strings.Cut(key, "/") // a user being added: its account's
	if g, ok := ch.grants[acct]; ok {
		return g
	}
	return config.QOSGrant{Allowed: ch.rec.RootQOS}
}

// isUserSetting reports the settings a user association takes as its
// own: QOS list, default QOS and limits.
func isUserSetting(kv setting) bool {
	return isQOSKey(kv.k) || kv.k == "defaultqos" || kv.k == "defqos" || policy.IsLimitField(rawKey(kv.raw))
}

// accountGrant is an account's QOS in force; for one being added, its
// parent's (or root's).
func (ch *acctChange) accountGrant(a *config.Account) config.QOSGrant {
	c := config.Cluster{Accounts: ch.rec.Accounts, QOS: ch.rec.QOS}
	idx := c.AssocQOS(ch.rec.RootQOS)
	if g, ok := idx[a.Name]; ok {
		return g
	}
	if g, ok := idx[a.Parent]; ok {
		return g
	}
	return config.QOSGrant{Allowed: ch.rec.RootQOS}
}

// applyUser applies a user association's own settings (QOS, default
// QOS, limits); other keys are the caller's (ok false).
func (ch *acctChange) applyUser(a *config.Account, u *config.User, kv setting) (bool, error) {
	switch {
	case isQOSKey(kv.k):
		list, err := ch.qosList(ch.grant(a.Name+"/"+u.Name).Allowed, kv)
		if err != nil {
			return true, err
		}
		u.QOS = list
		return true, nil
	case kv.k == "defaultqos" || kv.k == "defqos":
		d, err := ch.defaultQOS(kv.v)
		u.DefaultQOS = d
		return true, err
	}
	if ok, err := setLimit(&u.Limits, rawKey(kv.raw), kv.v); ok || err != nil {
		return true, err
	}
	return false, nil
}

// cascadeQOS applies an account's QOS-list settings to its user
// associations too, as sacctmgr modify account does (the anchor: alice's
// own normal,q1 became chem's normal,q1,q2): a plain list lets them
// inherit the account's, +/- change the lists they have of their own.
func (ch *acctChange) cascadeQOS(a *config.Account) error {
	for _, kv := range ch.set {
		if !isQOSKey(kv.k) {
			continue
		}
		plain := kv.k == "qos" && !strings.HasPrefix(kv.v, "+") && !strings.HasPrefix(kv.v, "-")
		for j := range a.Users {
			u := &a.Users[j]
			switch {
			case plain:
				u.QOS = nil
			case u.QOS != nil:
				list, err := ch.qosList(u.QOS, kv)
				if err != nil {
					return err
				}
				u.QOS = list
			}
		}
	}
	return nil
}

// dropQOS removes a deleted QOS from every list and default.
func (ch *acctChange) dropQOS(name string) {
	del := func(l []string) []string {
		if l == nil {
			return nil
		}
		return slices.DeleteFunc(l, func(q string) bool { return q == name })
	}
	ch.rec.RootQOS = del(ch.rec.RootQOS)
	for i := range ch.rec.Accounts {
		a := &ch.rec.Accounts[i]
		a.QOS = del(a.QOS)
		if a.DefaultQOS == name {
			a.DefaultQOS = ""
		}
		for j := range a.Users {
			u := &a.Users[j]
			u.QOS = del(u.QOS)
			if u.DefaultQOS == name {
				u.DefaultQOS = ""
			}
		}
	}
}
