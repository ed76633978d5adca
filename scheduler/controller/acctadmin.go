package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/policy"
)

// EventAccounting is the decision log's record of an admin's sacctmgr
// change: who (actor), what (reason: "add account", "modify qos", ...),
// and the changed entities before and after (fields "before", "after":
// their JSON; "changed" lists them).
const EventAccounting = "accounting"

// assocAdminService is sacctmgr's side in the controller.
type assocAdminService struct {
	pb.UnimplementedAssocAdminServer
	c *Controller
}

// Table is the accounting state in force; anyone may read it, as sacctmgr
// show is open to every user.
func (s *assocAdminService) Table(_ context.Context, _ *pb.AssocTableRequest) (*pb.AssocTable, error) {
	cfg := s.c.pcfg()
	out := assocTableProto(cfg.Accounts, cfg.QOS)
	out.Admins, out.Operators, out.Cluster = cfg.Admins, cfg.Operators, cfg.Name
	out.RootQos = cfg.Root()
	out.ControlHost, out.ControlPort = s.c.controlAddr()
	out.Tres = tresTable(cfg)
	return out, nil
}

// Change is sacctmgr add|modify|delete account|user|qos (admins only):
// applied to a copy of the table, which is checked whole (its limiter
// built) before it is durable and in force; the next pass applies it.
func (s *assocAdminService) Change(ctx context.Context, req *pb.AssocChangeRequest) (*pb.AssocChangeResponse, error) {
	c := s.c
	id := caller(ctx)
	action, entity := strings.ToLower(req.GetAction()), strings.ToLower(req.GetEntity())
	if err := authorizeChange(id, action, entity, req.GetSet()); err != nil {
		return nil, err
	}
	var changed []string
	err := c.mutate(ctx, func() ([]write, func(), error) {
		cur := c.pcfg()
		rec := &acctRecord{Accounts: cloneAccounts(cur.Accounts), QOS: cloneQOS(cur.QOS), RootQOS: slices.Clone(cur.Root()),
			AdminLevels: maps.Clone(c.partitions.view().levels)}
		ch, err := newAcctChange(rec, req.GetNames(), req.GetWhere(), req.GetSet())
		if err != nil {
			return nil, nil, err
		}
		ch.inUse, ch.cluster, ch.staff = c.acctInUseLocked, cur.Name, cur.IsOperator
		if err := ch.run(action, entity); err != nil {
			return nil, nil, err
		}
		if req.GetDryRun() {
			changed = ch.changed
			return nil, nil, nil
		}
		w, err := acctWrite(rec)
		if err != nil {
			return nil, nil, err
		}
		before, after := acctDiff(entity, ch.changed, cur.Accounts, cur.QOS, rec)
		if ch.levels {
			before, after = levelDiff(ch.changed, c.partitions.view().levels, rec.AdminLevels)
		}
		if err := c.setAccounting(rec); err != nil {
			return nil, nil, status.Errorf(codes.InvalidArgument, "%v", err)
		}
		changed = ch.changed
		ev := &pb.Event{Kind: EventAccounting, Actor: id.User, Reason: action + " " + entity,
			Fields: map[string]string{"entity": entity, "changed": strings.Join(changed, ","), "before": before, "after": after}}
		ev.Detail = fmt.Sprintf("%s %s %s: %s -> %s", action, entity, ev.Fields["changed"], before, after)
		return append([]write{w}, c.record(ev)...), c.trigger, nil
	})
	if err != nil {
		if _, ok := status.FromError(err); !ok {
			err = status.Errorf(codes.Unavailable, "%v", err)
		}
		return nil, err
	}
	return &pb.AssocChangeResponse{Changed: changed}, nil
}

// acctInUseLocked refuses to remove an account, a user association
// ("account/user") or a QOS a job that has not ended uses, as Slurm
// refuses it ("Job(s) active, cancel job(s) before remove"). c.mu held.
func (c *Controller) acctInUseLocked(assoc, qos string) error {
	acct, user, _ := strings.Cut(assoc, "/")
	for _, j := range c.st.m.Active() {
		if finished(j.State) {
			continue
		}
		hit := (qos != "" && j.Core.QOS == qos) ||
			(acct != "" && j.Core.Account == acct && (user == "" || j.Core.User == user))
		if hit {
			return status.Errorf(codes.FailedPrecondition, "Job(s) active, cancel job(s) before remove\n  JobId = %d (%s)", j.Core.ID, j.State)
		}
	}
	return nil
}

// levelDiff is an AdminLevel change's before and after: the named users'
// run-time levels ("" where the file's applied).
func levelDiff(users []string, before, after map[string]string) (string, string) {
	pick := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for _, u := range users {
			out[u] = m[u]
		}
		return out
	}
	return jsonText(pick(before)), jsonText(pick(after))
}

// acctDiff is the changed entities before and after, as JSON: accounts
// (with their users) for account and user changes, QOS for QOS changes.
func acctDiff(entity string, changed []string, accts []config.Account, qos []config.QOS, after *acctRecord) (string, string) {
	if entity == "qos" {
		pick := func(list []config.QOS) []config.QOS {
			return slices.DeleteFunc(slices.Clone(list), func(q config.QOS) bool { return !slices.Contains(changed, q.Name) })
		}
		return jsonText(pick(qos)), jsonText(pick(after.QOS))
	}
	names := map[string]bool{}
	for _, ch := range changed {
		// user associations are "user/account"
		_, acct, ok := strings.Cut(ch, "/")
		if !ok {
			acct = ch
		}
		names[acct] = true
	}
	// An account removed along with a named parent is in the change too.
	for _, a := range accts {
		if !slices.ContainsFunc(after.Accounts, func(b config.Account) bool { return b.Name == a.Name }) {
			names[a.Name] = true
		}
	}
	pick := func(list []config.Account) []config.Account {
		return slices.DeleteFunc(slices.Clone(list), func(a config.Account) bool { return !names[a.Name] })
	}
	return jsonText(pick(accts)), jsonText(pick(after.Accounts))
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(unencodable: %v)", err)
	}
	return string(b)
}

// cloneAccounts copies the accounts deep enough to change users and
// limits without touching the table in force.
func cloneAccounts(in []config.Account) []config.Account {
	out := slices.Clone(in)
	for i := range out {
		out[i].Users = slices.Clone(out[i].Users)
		out[i].Limits = cloneLimits(out[i].Limits)
		out[i].QOS = slices.Clone(out[i].QOS)
		for j := range out[i].Users {
			u := &out[i].Users[j]
			u.QOS, u.Limits = slices.Clone(u.QOS), cloneLimits(u.Limits)
		}
	}
	return out
}

func cloneQOS(in []config.QOS) []config.QOS {
	out := slices.Clone(in)
	for i := range out {
		out[i].Preempt = slices.Clone(out[i].Preempt)
		out[i].Limits = cloneLimits(out[i].Limits)
	}
	return out
}

// cloneLimits copies the TRES maps (SetLimit already writes new maps;
// this keeps a future in-place edit from reaching the table in force).
func cloneLimits(s policy.LimitSet) policy.LimitSet {
	for _, p := range []*policy.TRES{&s.GrpTRES, &s.MaxTRESPerJob, &s.MaxTRESPerNode, &s.MaxTRESPerUser, &s.MaxTRESPerAccount} {
		if *p != nil {
			m := make(policy.TRES, len(*p))
			for k, v := range *p {
				m[k] = v
			}
			*p = m
		}
	}
	return s
}

func assocTableProto(accts []config.Account, qos []config.QOS) *pb.AssocTable {
	out := &pb.AssocTable{}
	for _, a := range accts {
		pa := &pb.AssocAccount{Name: a.Name, Parent: a.Parent, Shares: a.Shares, Limits: policy.FormatLimitSet(a.Limits),
			Description: a.Description, Organization: a.Organization, Qos: a.QOS, DefaultQos: a.DefaultQOS}
		for _, u := range a.Users {
			pa.Users = append(pa.Users, &pb.AssocUser{Name: u.Name, Shares: u.Shares, SharesParent: u.SharesParent, Default: u.Default,
				Qos: u.QOS, DefaultQos: u.DefaultQOS, Limits: policy.FormatLimitSet(u.Limits)})
		}
		out.Accounts = append(out.Accounts, pa)
	}
	for _, q := range qos {
		out.Qos = append(out.Qos, &pb.AssocQOS{Name: q.Name, Priority: int32(q.Priority), Limits: policy.FormatLimitSet(q.Limits),
			DenyOnLimit: q.DenyOnLimit, Preempt: q.Preempt, PreemptMode: q.PreemptMode, GraceSeconds: int64(q.GraceTime.Seconds()),
			MaxGpusPerUser: int32(q.MaxGPUsPerUser)})
	}
	return out
}

// Export writes the state in force (partitions, accounts, QOS) into the
// cluster file given, or the one the controller was started from.
func (s *assocAdminService) Export(ctx context.Context, req *pb.AssocExportRequest) (*pb.AssocExportResponse, error) {
	c := s.c
	if id := caller(ctx); !id.Operator() {
		return nil, status.Errorf(codes.PermissionDenied, "config export needs an operator or an admin (%s is neither)", id.User)
	}
	base := req.GetBase()
	if len(base) == 0 {
		if c.cfg.File == "" {
			return nil, status.Error(codes.FailedPrecondition, "this controller was started without a cluster file: send the file to export into")
		}
		b, err := os.ReadFile(c.cfg.File)
		if err != nil {
			return nil, status.Errorf(codes.FailedPrecondition, "read the cluster file to export into: %v", err)
		}
		base = b
	}
	out, err := config.Export(base, c.pcfg())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	return &pb.AssocExportResponse{ClusterYaml: out}, nil
}
