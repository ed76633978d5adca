package rest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// slurmdbd's writes: accounts, users and QOS added, changed and removed
// through the controller's AssocAdmin service (sacctmgr's), so the same
// admin rule, refusals, durability and decision log apply as to sacctmgr.
// Each record becomes one sacctmgr change: an existing name is modified,
// a new one added.

type dbAccountIn struct {
	Name         string       `json:"name"`
	Description  string       `json:"description"`
	Organization string       `json:"organization"`
	Associations []assocShort `json:"associations"`
}

type dbUserIn struct {
	Name         string       `json:"name"`
	Associations []assocShort `json:"associations"`
	Default      struct {
		Account string `json:"account"`
	} `json:"default"`
	// AdminLevel is sacctmgr's AdminLevel= ("None", "Operator",
	// "Administrator"; "Not Set" changes nothing).
	AdminLevel []string `json:"administrator_level"`
}

type perUA struct {
	Account *noVal `json:"account"`
	User    *noVal `json:"user"`
}

type tresPer struct {
	Account []tresIn `json:"account"`
	Job     []tresIn `json:"job"`
	Node    []tresIn `json:"node"`
	User    []tresIn `json:"user"`
}

// qosIn is the part of v0.0.44_qos Parity keeps.
type qosIn struct {
	Name     string   `json:"name"`
	Flags    []string `json:"flags"`
	Priority *noVal   `json:"priority"`
	Preempt  struct {
		List []string `json:"list"`
		Mode []string `json:"mode"`
	} `json:"preempt"`
	Limits struct {
		GraceTime *int64 `json:"grace_time"`
		Max       struct {
			ActiveJobs struct {
				Count *noVal `json:"count"`
			} `json:"active_jobs"`
			Jobs struct {
				Count      *noVal `json:"count"`
				ActiveJobs struct {
					Per perUA `json:"per"`
				} `json:"active_jobs"`
				Per perUA `json:"per"`
			} `json:"jobs"`
			TRES struct {
				Total []tresIn `json:"total"`
				Per   tresPer  `json:"per"`
			} `json:"tres"`
			WallClock struct {
				Per struct {
					Job *noVal `json:"job"`
				} `json:"per"`
			} `json:"wall_clock"`
		} `json:"max"`
	} `json:"limits"`
}

// within names the record a refusal is about, keeping the refusal's code
// (its HTTP status) and Slurm's words ("users[0] alice: You must be a
// super user to modify a users admin level").
func within(err error, format string, args ...any) error {
	st := status.Convert(err)
	return status.Errorf(st.Code(), "%s: %s", fmt.Sprintf(format, args...), st.Message())
}

func decodeLenient(body []byte, what string, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return status.Errorf(codes.InvalidArgument, "%s: %s", what, describeJSONError(err))
	}
	return nil
}

// change asks AssocAdmin for one change; a name that is there already
// (add) or not there (modify) is not an error here: the caller picks.
func (h *Handler) change(c *call, action, entity string, names, where, set []string) error {
	if h.b.AssocAdmin == nil {
		return status.Error(codes.Unimplemented, "this controller serves no accounting changes")
	}
	_, err := h.b.AssocAdmin.Change(c.ctx, &pb.AssocChangeRequest{Action: action, Entity: entity, Names: names, Where: where, Set: set})
	return err
}

// upsert adds name, or modifies it when it exists (set non-empty).
func (h *Handler) upsert(c *call, entity, name string, add, modify []string) error {
	err := h.change(c, "add", entity, []string{name}, nil, add)
	if status.Code(err) == codes.AlreadyExists && len(modify) > 0 {
		return h.change(c, "modify", entity, []string{name}, nil, modify)
	}
	if status.Code(err) == codes.AlreadyExists {
		return nil
	}
	return err
}

func serveDBAccountsPost(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	var in struct {
		Accounts []dbAccountIn `json:"accounts"`
	}
	if err := decodeLenient(body, "openapi_accounts_resp", &in); err != nil {
		return nil, err
	}
	for i, a := range in.Accounts {
		if a.Name == "" {
			return nil, status.Errorf(codes.InvalidArgument, "accounts[%d].name: an account needs a name", i)
		}
		var set []string
		if a.Description != "" {
			set = append(set, "Description="+a.Description)
		}
		if a.Organization != "" {
			set = append(set, "Organization="+a.Organization)
		}
		if err := h.upsert(c, "account", a.Name, set, set); err != nil {
			return nil, within(err, "accounts[%d] %s", i, a.Name)
		}
	}
	return &envelope{}, nil
}

// serveDBAccountsAssoc is accounts_association/: accounts added under a
// parent with the association's shares and limits.
func serveDBAccountsAssoc(h *Handler, c *call) (any, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	var in struct {
		Cond struct {
			Accounts    []string       `json:"accounts"`
			Association map[string]any `json:"association"`
		} `json:"association_condition"`
		Account struct {
			Description  string `json:"description"`
			Organization string `json:"organization"`
		} `json:"account"`
	}
	if err := decodeLenient(body, "openapi_accounts_add_cond_resp", &in); err != nil {
		return nil, err
	}
	if len(in.Cond.Accounts) == 0 {
		return nil, status.Error(codes.InvalidArgument, "association_condition.accounts: name the accounts to add")
	}
	set, err := assocSettings(in.Cond.Association)
	if err != nil {
		return nil, err
	}
	if in.Account.Description != "" {
		set = append(set, "Description="+in.Account.Description)
	}
	if in.Account.Organization != "" {
		set = append(set, "Organization="+in.Account.Organization)
	}
	if err := h.change(c, "add", "account", in.Cond.Accounts, nil, set); err != nil {
		return nil, err
	}
	return &struct {
		Added string `json:"added_accounts"`
		envelope
	}{Added: strings.Join(in.Cond.Accounts, ",")}, nil
}

// assocSettings reads v0.0.44_assoc_rec_set's parent, fairshare and
// limits as sacctmgr settings.
func assocSettings(m map[string]any) ([]string, error) {
	var set []string
	for k, v := range m {
		switch k {
		case "parent":
			s, ok := v.(string)
			if !ok {
				return nil, status.Errorf(codes.InvalidArgument, "association.parent: %v is not a string", v)
			}
			set = append(set, "Parent="+s)
		case "fairshare":
			f, ok := v.(float64)
			if !ok {
				return nil, status.Errorf(codes.InvalidArgument, "association.fairshare: %v is not a number", v)
			}
			set = append(set, "Fairshare="+strconv.FormatFloat(f, 'f', -1, 64))
		case "maxjobs", "grpjobs", "maxsubmitjobs", "grpsubmitjobs", "maxwalldurationperjob":
			n, err := noValOf(v, "association."+k)
			if err != nil {
				return nil, err
			}
			if n != "" {
				set = append(set, k+"="+n)
			}
		case "grptres", "maxtresperjob", "maxtrespernode":
			t, err := dbTRESOf(v, "association."+k)
			if err != nil {
				return nil, err
			}
			if t != "" {
				set = append(set, k+"="+t)
			}
		default:
			return nil, status.Errorf(codes.InvalidArgument, "association.%s cannot be set through Parity (nothing was changed)", k)
		}
	}
	slices.Sort(set)
	return set, nil
}

func noValOf(v any, where string) (string, error) {
	b, _ := json.Marshal(v)
	var n noVal
	if err := json.Unmarshal(b, &n); err != nil {
		return "", status.Errorf(codes.InvalidArgument, "%s: %s", where, describeJSONError(err))
	}
	return noValText(&n), nil
}

// noValText is a limit's sacctmgr value: "" unset, -1 infinite.
func noValText(n *noVal) string {
	switch {
	case n == nil || !n.Set && !n.Infinite:
		return ""
	case n.Infinite:
		return "-1"
	}
	return strconv.FormatInt(n.Number, 10)
}

func dbTRESOf(v any, where string) (string, error) {
	b, _ := json.Marshal(v)
	var t []tresIn
	if err := json.Unmarshal(b, &t); err != nil {
		return "", status.Errorf(codes.InvalidArgument, "%s: %s", where, describeJSONError(err))
	}
	return tresText(t), nil
}

// tresText writes a TRES list as sacctmgr's "cpu=4,gres/gpu=2".
func tresText(list []tresIn) string {
	var out []string
	for _, t := range list {
		name := t.Type
		if t.Name != "" {
			name += "/" + t.Name
		}
		out = append(out, name+"="+strconv.FormatInt(t.Count, 10))
	}
	return strings.Join(out, ",")
}

func serveDBAccountDelete(h *Handler, c *call) (any, error) {
	name := c.r.PathValue("account_name")
	if err := h.change(c, "delete", "account", []string{name}, nil, nil); err != nil {
		return nil, err
	}
	return &struct {
		Removed []string `json:"removed_accounts"`
		envelope
	}{Removed: []string{name}}, nil
}
