package controller

import (
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/config"
)

// run applies action to entity; ch.changed lists what changed.
func (ch *acctChange) run(action, entity string) error {
	var err error
	switch entity + " " + action {
	case "account add":
		err = ch.addAccounts()
	case "account modify":
		err = ch.modifyAccounts()
	case "account delete":
		err = ch.deleteAccounts()
	case "user add":
		err = ch.addUsers()
	case "user modify":
		err = ch.modifyUsers()
	case "user delete":
		err = ch.deleteUsers()
	case "qos add":
		err = ch.addQOS()
	case "qos modify":
		err = ch.modifyQOS()
	case "qos delete":
		err = ch.deleteQOS()
	default:
		return status.Errorf(codes.InvalidArgument, "sacctmgr %s %s: want add, modify or delete of account, user or qos", action, entity)
	}
	if err == nil && len(ch.changed) == 0 {
		err = errNothing(action)
	}
	return err
}

func (ch *acctChange) addAccounts() error {
	for k, v := range ch.where {
		return unknownOption(k + "=" + v)
	}
	for _, name := range ch.names {
		if err := badName("account", name); err != nil {
			return err
		}
		if ch.account(name) >= 0 || name == "root" {
			continue
		}
		a := config.Account{Name: name, Shares: 1}
		if err := ch.applyAccount(&a); err != nil {
			return err
		}
		ch.rec.Accounts = append(ch.rec.Accounts, a)
		ch.changed = append(ch.changed, name)
	}
	return nil
}

func (ch *acctChange) modifyAccounts() error {
	if len(ch.set) == 0 {
		return status.Error(codes.InvalidArgument, "You didn't give me anything to set")
	}
	for _, name := range ch.names {
		i := ch.account(name)
		if i < 0 {
			continue
		}
		if err := ch.applyAccount(&ch.rec.Accounts[i]); err != nil {
			return err
		}
		if err := ch.cascadeQOS(&ch.rec.Accounts[i]); err != nil {
			return err
		}
		ch.changed = append(ch.changed, name)
	}
	return nil
}

// deleteAccounts removes accounts with their user associations and,
// as Slurm 22.05 removes a parent's associations with it, every account
// below them (so "delete account chem,org" with org under chem removes
// both at once, and "delete account chem" takes org along). Nothing is
// removed while a job that has not ended uses one of them (Slurm refuses
// a removal while jobs are active). The names are listed sorted, as
// sacctmgr lists them.
func (ch *acctChange) deleteAccounts() error {
	gone := map[string]bool{}
	for _, name := range ch.names {
		if ch.account(name) < 0 || slices.Contains(ch.changed, name) {
			continue
		}
		ch.changed = append(ch.changed, name)
		gone[name] = true
		for _, a := range ch.rec.Accounts {
			if ch.below(a.Name, name) {
				gone[a.Name] = true
			}
		}
	}
	slices.Sort(ch.changed)
	for _, a := range ch.rec.Accounts {
		if gone[a.Name] {
			if err := ch.inUse(a.Name, ""); err != nil {
				return err
			}
		}
	}
	ch.rec.Accounts = slices.DeleteFunc(ch.rec.Accounts, func(a config.Account) bool { return gone[a.Name] })
	return nil
}

// userAccounts is the account= condition or setting, checked to exist.
func (ch *acctChange) userAccounts(v string) ([]string, error) {
	list := splitList(v)
	for _, a := range list {
		if ch.account(a) < 0 {
			return nil, status.Errorf(codes.NotFound, "This account '%s' doesn't exist.\n        Contact your admin to add this account.\n No associations or wckeys created.", a)
		}
	}
	return list, nil
}

func (ch *acctChange) addUsers() error {
	accts, def, sh, parent := "", "", 1.0, false
	var own []setting // QOS and limits, each new association's
	for k, v := range ch.where {
		if k != "account" {
			return unknownOption(k + "=" + v)
		}
		accts = v
	}
	for _, kv := range ch.set {
		switch kv.k {
		case "account", "accounts":
			accts = kv.v
		case "defaultaccount", "defaultacct":
			def = kv.v
		case "fairshare", "shares":
			f, p, err := shares(kv.v, true)
			if err != nil {
				return err
			}
			sh, parent = f, p
		default:
			if !isUserSetting(kv) {
				return unknownOption(kv.raw)
			}
			own = append(own, kv)
		}
	}
	if accts == "" {
		accts = def
	}
	if accts == "" {
		return status.Error(codes.InvalidArgument, "Need name of account to add user to.")
	}
	list, err := ch.userAccounts(accts)
	if err != nil {
		return err
	}
	if def != "" && !slices.Contains(list, def) {
		return status.Errorf(codes.InvalidArgument, "DefaultAccount=%s is not among the accounts given (%s)", def, accts)
	}
	// Each account's users as a set: a batch of 10,000 names looks each
	// up once instead of scanning the list per name.
	have := make(map[string]map[string]bool, len(list))
	for _, acct := range list {
		set := map[string]bool{}
		for _, u := range ch.rec.Accounts[ch.account(acct)].Users {
			set[u.Name] = true
		}
		have[acct] = set
	}
	for _, name := range ch.names {
		if err := badName("user", name); err != nil {
			return err
		}
		for _, acct := range list {
			a := &ch.rec.Accounts[ch.account(acct)]
			if have[acct][name] {
				continue
			}
			have[acct][name] = true
			u := config.User{Name: name, Shares: sh, SharesParent: parent}
			if err := ch.applyUserSettings(a, &u, own); err != nil {
				return err
			}
			a.Users = append(a.Users, u)
			ch.changed = append(ch.changed, name+"/"+acct)
		}
		if def != "" {
			ch.setDefault(name, def)
		}
	}
	return nil
}

// setDefault makes acct the user's default account (and no other).
func (ch *acctChange) setDefault(user, acct string) {
	for ai := range ch.rec.Accounts {
		a := &ch.rec.Accounts[ai]
		for i := range a.Users {
			if a.Users[i].Name == user {
				a.Users[i].Default = a.Name == acct
			}
		}
	}
}

// eachUser calls fn on every association of the named users, within
// the account= condition when given; fn may remove the association.
func (ch *acctChange) eachUser(fn func(a *config.Account, i int) error) error {
	var only []string
	if v, ok := ch.where["account"]; ok {
		only = splitList(v)
	}
	for k, v := range ch.where {
		if k != "account" {
			return status.Errorf(codes.InvalidArgument, "Unknown condition: %s=%s", k, v)
		}
	}
	for ai := range ch.rec.Accounts {
		a := &ch.rec.Accounts[ai]
		if only != nil && !slices.Contains(only, a.Name) {
			continue
		}
		for i := 0; i < len(a.Users); i++ {
			if !slices.Contains(ch.names, a.Users[i].Name) {
				continue
			}
			name, n := a.Users[i].Name, len(a.Users)
			if err := fn(a, i); err != nil {
				return err
			}
			ch.changed = append(ch.changed, name+"/"+a.Name)
			if len(a.Users) < n {
				i-- // fn removed it: the next one moved here
			}
		}
	}
	return nil
}

func (ch *acctChange) modifyUsers() error {
	if len(ch.set) == 0 {
		return status.Error(codes.InvalidArgument, "You didn't give me anything to set")
	}
	def, level := "", ""
	var assoc []setting
	for _, kv := range ch.set {
		switch {
		case kv.k == "defaultaccount" || kv.k == "defaultacct":
			def = kv.v
		case kv.k == "adminlevel":
			l, err := parseLevel(kv.v)
			if err != nil {
				return err
			}
			level = l
		case kv.k == "fairshare" || kv.k == "shares":
			if _, _, err := shares(kv.v, true); err != nil {
				return err
			}
			assoc = append(assoc, kv)
		case isUserSetting(kv):
			assoc = append(assoc, kv)
		default:
			return unknownOption(kv.raw)
		}
	}
	if def != "" {
		if err := ch.modifyDefault(def); err != nil {
			return err
		}
	}
	if level != "" {
		ch.levels = true
		ch.setLevels(level, ch.staff)
	}
	if len(assoc) == 0 {
		return nil
	}
	return ch.eachUser(func(a *config.Account, i int) error {
		return ch.applyUserSettings(a, &a.Users[i], assoc)
	})
}

// applyUserSettings applies fairshare, QOS and limit settings to one
// user association.
func (ch *acctChange) applyUserSettings(a *config.Account, u *config.User, set []setting) error {
	for _, kv := range set {
		if kv.k == "fairshare" || kv.k == "shares" {
			f, p, err := shares(kv.v, true)
			if err != nil {
				return err
			}
			u.Shares, u.SharesParent = f, p
			continue
		}
		if _, err := ch.applyUser(a, u, kv); err != nil {
			return err
		}
	}
	return nil
}

// modifyDefault is modify user NAME set DefaultAccount=ACCT: each named
// user must already be in ACCT (changed lists the users).
func (ch *acctChange) modifyDefault(acct string) error {
	i := ch.account(acct)
	for _, name := range ch.names {
		has := false
		for ai := range ch.rec.Accounts {
			has = has || slices.ContainsFunc(ch.rec.Accounts[ai].Users, func(u config.User) bool { return u.Name == name })
		}
		if !has {
			continue
		}
		if i < 0 || !slices.ContainsFunc(ch.rec.Accounts[i].Users, func(u config.User) bool { return u.Name == name }) {
			return status.Errorf(codes.InvalidArgument, "DefaultAccount=%s: user %s has no association with account %s; add one first (sacctmgr add user %s account=%s)", acct, name, acct, name, acct)
		}
		ch.setDefault(name, acct)
		ch.changed = append(ch.changed, name)
	}
	return nil
}

func (ch *acctChange) deleteUsers() error {
	return ch.eachUser(func(a *config.Account, i int) error {
		if err := ch.inUse(a.Name+"/"+a.Users[i].Name, ""); err != nil {
			return err
		}
		a.Users = slices.Delete(a.Users, i, i+1)
		return nil
	})
}

func (ch *acctChange) addQOS() error {
	for _, name := range ch.names {
		if err := badName("qos", name); err != nil {
			return err
		}
		if ch.qos(name) >= 0 {
			continue
		}
		q := config.QOS{Name: name}
		if err := ch.applyQOS(&q); err != nil {
			return err
		}
		ch.rec.QOS = append(ch.rec.QOS, q)
		ch.changed = append(ch.changed, name)
	}
	return nil
}

func (ch *acctChange) modifyQOS() error {
	if len(ch.set) == 0 {
		return status.Error(codes.InvalidArgument, "You didn't give me anything to set")
	}
	for _, name := range ch.names {
		i := ch.qos(name)
		if i < 0 {
			continue
		}
		if err := ch.applyQOS(&ch.rec.QOS[i]); err != nil {
			return err
		}
		ch.changed = append(ch.changed, name)
	}
	return nil
}

func (ch *acctChange) deleteQOS() error {
	for _, name := range ch.names {
		i := ch.qos(name)
		if i < 0 {
			continue
		}
		if name == config.DefaultQOS {
			return status.Errorf(codes.FailedPrecondition, "QOS %s is the default every job falls back to; it cannot be deleted", name)
		}
		if err := ch.inUse("", name); err != nil {
			return err
		}
		for k := range ch.rec.QOS {
			if slices.Contains(ch.rec.QOS[k].Preempt, name) {
				return status.Errorf(codes.FailedPrecondition, "QOS %s preempts %s: change its Preempt first", ch.rec.QOS[k].Name, name)
			}
		}
		ch.rec.QOS = slices.Delete(ch.rec.QOS, i, i+1)
		ch.dropQOS(name)
		ch.changed = append(ch.changed, name)
	}
	return nil
}
