package rest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// serveDBUsersPost adds users to the accounts their associations name
// (a user is an association in Parity: one with none is refused), and
// sets their default account.
func serveDBUsersPost(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	var in struct {
		Users []dbUserIn `json:"users"`
	}
	if err := decodeLenient(body, "openapi_users_resp", &in); err != nil {
		return nil, err
	}
	for i, u := range in.Users {
		var accts []string
		for _, a := range u.Associations {
			if a.Account != "" && !slices.Contains(accts, a.Account) {
				accts = append(accts, a.Account)
			}
		}
		if u.Name == "" || len(accts) == 0 && u.Default.Account == "" && len(u.AdminLevel) == 0 {
			return nil, status.Errorf(codes.InvalidArgument, "users[%d]: a user needs a name and an account (associations[].account or default.account)", i)
		}
		if len(accts) > 0 {
			set := []string{"Account=" + strings.Join(accts, ",")}
			if err := h.change(c, "add", "user", []string{u.Name}, nil, set); err != nil && status.Code(err) != codes.AlreadyExists {
				return nil, within(err, "users[%d] %s", i, u.Name)
			}
		}
		if d := u.Default.Account; d != "" {
			if err := h.upsert(c, "user", u.Name, []string{"Account=" + d, "DefaultAccount=" + d}, []string{"DefaultAccount=" + d}); err != nil {
				return nil, within(err, "users[%d] %s", i, u.Name)
			}
		}
		for _, l := range u.AdminLevel {
			if l == "Not Set" {
				continue
			}
			if err := h.change(c, "modify", "user", []string{u.Name}, nil, []string{"AdminLevel=" + l}); err != nil {
				return nil, within(err, "users[%d] %s", i, u.Name)
			}
		}
	}
	return &envelope{}, nil
}

// serveDBUsersAssoc is users_association/: users added to accounts.
func serveDBUsersAssoc(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	var in struct {
		Cond struct {
			Users       []string       `json:"users"`
			Accounts    []string       `json:"accounts"`
			Association map[string]any `json:"association"`
		} `json:"association_condition"`
		User struct {
			DefaultAccount string `json:"defaultaccount"`
		} `json:"user"`
	}
	if err := decodeLenient(body, "openapi_users_add_cond_resp", &in); err != nil {
		return nil, err
	}
	if len(in.Cond.Users) == 0 || len(in.Cond.Accounts) == 0 {
		return nil, status.Error(codes.InvalidArgument, "association_condition: name the users and the accounts")
	}
	set := []string{"Account=" + strings.Join(in.Cond.Accounts, ",")}
	if f, ok := in.Cond.Association["fairshare"].(float64); ok {
		set = append(set, "Fairshare="+strconv.FormatFloat(f, 'f', -1, 64))
	}
	if d := in.User.DefaultAccount; d != "" {
		set = append(set, "DefaultAccount="+d)
	}
	if err := h.change(c, "add", "user", in.Cond.Users, nil, set); err != nil {
		return nil, err
	}
	return &struct {
		Added string `json:"added_users"`
		envelope
	}{Added: strings.Join(in.Cond.Users, ",")}, nil
}

func serveDBUserDelete(h *Handler, c *call) (any, error) {
	if err := h.change(c, "delete", "user", []string{c.r.PathValue("name")}, nil, nil); err != nil {
		return nil, err
	}
	return &envelope{}, nil
}

// serveDBQOSPost adds or updates QOS: priority, DENY_LIMIT, preemption
// and the limits Parity applies.
func serveDBQOSPost(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	var in struct {
		QOS []qosIn `json:"qos"`
	}
	if err := decodeLenient(body, "openapi_slurmdbd_qos_resp", &in); err != nil {
		return nil, err
	}
	for i, q := range in.QOS {
		if q.Name == "" {
			return nil, status.Errorf(codes.InvalidArgument, "qos[%d].name: a QOS needs a name", i)
		}
		set, err := q.settings()
		if err != nil {
			return nil, within(err, "qos[%d] %s", i, q.Name)
		}
		if err := h.upsert(c, "qos", q.Name, set, set); err != nil {
			return nil, within(err, "qos[%d] %s", i, q.Name)
		}
	}
	return &envelope{}, nil
}

// settings are the record's sacctmgr settings.
func (q *qosIn) settings() ([]string, error) {
	var set []string
	add := func(k, v string) {
		if v != "" {
			set = append(set, k+"="+v)
		}
	}
	add("Priority", noValText(q.Priority))
	for _, f := range q.Flags {
		if f != "DENY_LIMIT" {
			return nil, status.Errorf(codes.InvalidArgument, "flags: %s is not a flag Parity applies (DENY_LIMIT)", f)
		}
	}
	if q.Flags != nil {
		flag := "-1"
		if slices.Contains(q.Flags, "DENY_LIMIT") {
			flag = "DenyOnLimit"
		}
		add("Flags", flag)
	}
	if q.Preempt.List != nil {
		add("Preempt", strings.Join(q.Preempt.List, ","))
	}
	if len(q.Preempt.Mode) > 0 {
		add("PreemptMode", q.Preempt.Mode[0])
	}
	l := &q.Limits
	if l.GraceTime != nil {
		add("GraceTime", fmt.Sprintf("00:00:%02d", *l.GraceTime))
	}
	m := &l.Max
	add("GrpJobs", noValText(m.ActiveJobs.Count))
	add("GrpSubmitJobs", noValText(m.Jobs.Count))
	add("MaxJobsPU", noValText(m.Jobs.ActiveJobs.Per.User))
	add("MaxJobsPA", noValText(m.Jobs.ActiveJobs.Per.Account))
	add("MaxSubmitPU", noValText(m.Jobs.Per.User))
	add("MaxSubmitPA", noValText(m.Jobs.Per.Account))
	add("GrpTRES", tresText(m.TRES.Total))
	add("MaxTRES", tresText(m.TRES.Per.Job))
	add("MaxTRESPerNode", tresText(m.TRES.Per.Node))
	add("MaxTRESPU", tresText(m.TRES.Per.User))
	add("MaxTRESPA", tresText(m.TRES.Per.Account))
	add("MaxWall", noValText(m.WallClock.Per.Job)) // minutes, as slurmdbd keeps it
	return set, nil
}

func serveDBQOSDelete(h *Handler, c *call) (any, error) {
	name := c.r.PathValue("qos")
	if err := h.change(c, "delete", "qos", []string{name}, nil, nil); err != nil {
		return nil, err
	}
	return &struct {
		Removed []string `json:"removed_qos"`
		envelope
	}{Removed: []string{name}}, nil
}
