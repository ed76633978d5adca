package controller

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/policy"
)

// acctChange is one sacctmgr add|modify|delete over a copy of the table.
type acctChange struct {
	rec     *acctRecord
	names   []string
	where   map[string]string // lower-case keys
	set     []setting         // in order
	changed []string
	inUse   func(account, qos string) error // a live job's refusal, or nil
	cluster string                          // for messages, as Slurm names it
	grants  map[string]config.QOSGrant      // user associations' QOS, built on first use
	staff   func(user string) bool          // an admin or operator in force
	levels  bool                            // AdminLevel= was set
}

// newAcctChange reads the request's settings: Key=value words, keys in
// any case; an unknown where key is refused in Slurm's words.
func newAcctChange(rec *acctRecord, names, where, set []string) (*acctChange, error) {
	ch := &acctChange{rec: rec, names: names, where: map[string]string{}}
	for _, w := range where {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "Unknown condition: %s", w)
		}
		k = strings.ToLower(k)
		if k == "name" || k == "names" || k == "user" || k == "users" {
			ch.names = append(ch.names, strings.Split(v, ",")...)
			continue
		}
		if k == "accounts" {
			k = "account"
		}
		ch.where[k] = v
	}
	for _, s := range set {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "Unknown option: %s\n Use keyword 'where' to modify condition", s)
		}
		ch.set = append(ch.set, setting{k: strings.ToLower(k), v: v, raw: s})
	}
	return ch, nil
}

// setting is one KEY=VALUE: the key in lower case, and the word as given.
type setting struct{ k, v, raw string }

// rawKey is a setting's key as given (for messages naming it).
func rawKey(word string) string { k, _, _ := strings.Cut(word, "="); return k }

func unknownOption(word string) error {
	return status.Errorf(codes.InvalidArgument, "Unknown option: %s\n Use keyword 'where' to modify condition", word)
}

func (ch *acctChange) account(name string) int {
	return slices.IndexFunc(ch.rec.Accounts, func(a config.Account) bool { return a.Name == name })
}

func (ch *acctChange) qos(name string) int {
	return slices.IndexFunc(ch.rec.QOS, func(q config.QOS) bool { return q.Name == name })
}

// shares reads fairshare= (a number, or "parent" where allowed).
func shares(v string, parentOK bool) (float64, bool, error) {
	if parentOK && strings.EqualFold(v, "parent") {
		return 0, true, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, false, status.Errorf(codes.InvalidArgument, "Fairshare=%q: not a number (a share count, or parent)", v)
	}
	return f, false, nil
}

// setLimit applies a limit setting, refusing a bad value naming the field.
func setLimit(set *policy.LimitSet, k, v string) (bool, error) {
	if !policy.IsLimitField(k) {
		return false, nil
	}
	if err := policy.SetLimit(set, k, v, acctWall); err != nil {
		return true, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	return true, nil
}

func acctWall(s string) (time.Duration, error) {
	if s == "-1" || strings.EqualFold(s, "unlimited") {
		return -1, nil
	}
	d, _, err := config.ParseDuration(s)
	return d, err
}

// applyAccount applies the settings to one account.
func (ch *acctChange) applyAccount(a *config.Account) error {
	for _, kv := range ch.set {
		k, v, raw := kv.k, kv.v, kv.raw
		switch {
		case k == "parent":
			if v != policy.RootAccount && ch.account(v) < 0 {
				return status.Errorf(codes.NotFound, "Parent account '%s' doesn't exist on cluster %s\n        Contact your admin to add this account.\n No associations created.", v, ch.cluster)
			}
			if v == a.Name || ch.below(v, a.Name) {
				return status.Errorf(codes.InvalidArgument, "Parent=%s: account %s cannot be its own ancestor", v, a.Name)
			}
			a.Parent = v
			if v == policy.RootAccount {
				a.Parent = ""
			}
		case k == "description" || k == "descr":
			a.Description = v
		case k == "organization" || k == "org":
			a.Organization = v
		case k == "fairshare" || k == "shares":
			f, _, err := shares(v, false)
			if err != nil {
				return err
			}
			a.Shares = f
		case isQOSKey(k):
			list, err := ch.qosList(ch.accountGrant(a).Allowed, kv)
			if err != nil {
				return err
			}
			a.QOS = list
		case k == "defaultqos" || k == "defqos":
			d, err := ch.defaultQOS(v)
			if err != nil {
				return err
			}
			a.DefaultQOS = d
		default:
			if ok, err := setLimit(&a.Limits, rawKey(raw), v); err != nil || !ok {
				return orUnknown(err, raw)
			}
		}
	}
	return nil
}

// below reports whether account x is a descendant of anc.
func (ch *acctChange) below(x, anc string) bool {
	for i := 0; i < len(ch.rec.Accounts) && x != ""; i++ {
		j := ch.account(x)
		if j < 0 {
			return false
		}
		x = ch.rec.Accounts[j].Parent
		if x == anc {
			return true
		}
	}
	return false
}

func orUnknown(err error, word string) error {
	if err != nil {
		return err
	}
	return unknownOption(word)
}

// applyQOS applies the settings to one QOS.
func (ch *acctChange) applyQOS(q *config.QOS) error {
	for _, kv := range ch.set {
		k, v, raw := kv.k, kv.v, kv.raw
		switch k {
		case "priority":
			n, err := strconv.Atoi(v)
			if err != nil || n < -1 {
				return status.Errorf(codes.InvalidArgument, "Priority=%q: not a number", v)
			}
			q.Priority = max(n, 0)
		case "flags":
			deny, err := qosFlags(q.DenyOnLimit, v)
			if err != nil {
				return err
			}
			q.DenyOnLimit = deny
		case "preempt":
			list := splitList(v)
			for _, p := range list {
				if ch.qos(p) < 0 {
					return status.Errorf(codes.NotFound, "Preempt=%s: no QOS %s", v, p)
				}
			}
			q.Preempt = list
		case "preemptmode":
			m := strings.ToLower(v)
			if !slices.Contains([]string{"off", "cancel", "requeue", ""}, m) {
				return status.Errorf(codes.InvalidArgument, "PreemptMode=%q: want OFF, CANCEL or REQUEUE", v)
			}
			q.PreemptMode = m
		case "gracetime":
			d, _, err := config.ParseDuration(v)
			if err != nil {
				return status.Errorf(codes.InvalidArgument, "GraceTime=%q: %v", v, err)
			}
			q.GraceTime = d
		default:
			if ok, err := setLimit(&q.Limits, rawKey(raw), v); err != nil || !ok {
				return orUnknown(err, raw)
			}
		}
	}
	return nil
}

// qosFlags reads Flags= (DenyOnLimit is the one Parity applies): a plain
// list replaces, +=/-= forms come as "+X"/"-X" from the client.
func qosFlags(cur bool, v string) (bool, error) {
	mode := byte(0)
	if v != "" && (v[0] == '+' || v[0] == '-') {
		mode, v = v[0], v[1:]
	}
	deny := false
	for _, f := range splitList(v) {
		if !strings.EqualFold(f, "DenyOnLimit") && !strings.EqualFold(f, "-1") {
			return false, status.Errorf(codes.InvalidArgument, "Flags=%s: flag %s is not one Parity applies (DenyOnLimit)", v, f)
		}
		deny = deny || strings.EqualFold(f, "DenyOnLimit")
	}
	switch mode {
	case '+':
		return cur || deny, nil
	case '-':
		return cur && !deny, nil
	}
	return deny, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func errNothing(action string) error {
	switch action {
	case "add":
		return status.Error(codes.AlreadyExists, "Nothing new added.")
	case "modify":
		return status.Error(codes.NotFound, "Nothing modified")
	}
	return status.Error(codes.NotFound, "Nothing deleted")
}

func badName(entity, name string) error {
	if name == "" || strings.ContainsAny(name, " ,=/'\"\x00") {
		return status.Errorf(codes.InvalidArgument, "Invalid %s name %q", entity, name)
	}
	return nil
}
