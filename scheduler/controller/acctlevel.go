package controller

import (
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
)

// Admin levels (sacctmgr modify user U set AdminLevel=None|Operator|
// Administrator) are accounting state over cluster.yaml's admins and
// operators: a level set at run time replaces the file's for that user.
// As in Slurm 22.05 (recorded on the accounting anchor), an operator
// adds, modifies and deletes accounts and users but not QOS, and sets no
// admin level; a user changes nothing.

const (
	levelAdmin    = "Administrator"
	levelOperator = "Operator"
	levelNone     = "None"
)

// parseLevel reads AdminLevel= in sacctmgr's spellings.
func parseLevel(v string) (string, error) {
	switch strings.ToLower(v) {
	case "none":
		return levelNone, nil
	case "operator", "oper":
		return levelOperator, nil
	case "admin", "administrator":
		return levelAdmin, nil
	}
	return "", status.Errorf(codes.InvalidArgument, "AdminLevel=%s: want None, Operator or Administrator", v)
}

// effectiveStaff is the admins and operators in force: the file's, with
// each run-time level replacing the file's for its user.
func effectiveStaff(file *config.Cluster, levels map[string]string) (admins, operators []string) {
	for _, u := range file.Admins {
		if _, ok := levels[u]; !ok {
			admins = append(admins, u)
		}
	}
	for _, u := range file.Operators {
		if _, ok := levels[u]; !ok {
			operators = append(operators, u)
		}
	}
	users := make([]string, 0, len(levels))
	for u := range levels {
		users = append(users, u)
	}
	slices.Sort(users)
	for _, u := range users {
		switch levels[u] {
		case levelAdmin:
			admins = append(admins, u)
		case levelOperator:
			operators = append(operators, u)
		}
	}
	return admins, operators
}

// Slurm's refusals, which sacctmgr prints after "sacctmgr: error: ".
const (
	errNoPrivilege = "Your user doesn't have privilege to perform this action"
	errSuperUser   = "You must be a super user to modify a users admin level"
	errDenied      = "Access/permission denied"
)

// authorizeChange applies Slurm's rules for who may make a change.
func authorizeChange(id auth.Identity, action, entity string, set []string) error {
	if id.Admin() {
		return nil
	}
	levelSet := slices.ContainsFunc(set, func(s string) bool { return strings.EqualFold(rawKey(s), "adminlevel") })
	switch {
	case id.Operator() && levelSet:
		return status.Error(codes.PermissionDenied, errSuperUser)
	case id.Operator() && entity != "qos":
		return nil
	case action == "add":
		return status.Error(codes.PermissionDenied, errDenied)
	}
	return status.Error(codes.PermissionDenied, errNoPrivilege)
}

// setLevels is modify user NAMES set AdminLevel=L: each named user with
// an association or a level already (changed lists the users).
func (ch *acctChange) setLevels(level string, staff func(string) bool) {
	for _, name := range ch.names {
		has := staff(name)
		for ai := 0; ai < len(ch.rec.Accounts) && !has; ai++ {
			has = slices.ContainsFunc(ch.rec.Accounts[ai].Users, func(u config.User) bool { return u.Name == name })
		}
		if !has {
			continue
		}
		if ch.rec.AdminLevels == nil {
			ch.rec.AdminLevels = map[string]string{}
		}
		ch.rec.AdminLevels[name] = level
		if !slices.Contains(ch.changed, name) {
			ch.changed = append(ch.changed, name)
		}
	}
}
