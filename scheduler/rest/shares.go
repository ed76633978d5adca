package rest

import (
	"math"
	"slices"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// sharesUseParent is SLURMDB_FS_USE_PARENT, the raw shares slurmctld
// reports for a fairshare=parent association.
const sharesUseParent = 0x7FFFFFFF

type sharesResp struct {
	Shares sharesMsg `json:"shares"`
	envelope
}

// sharesMsg is v0.0.44_shares_resp_msg.
type sharesMsg struct {
	Shares      []*shareRow `json:"shares"`
	TotalShares int64       `json:"total_shares"`
}

// shareRow is v0.0.44_assoc_shares_obj_wrap: one row of sshare.
type shareRow struct {
	ID               int32   `json:"id"`
	Cluster          string  `json:"cluster"`
	Name             string  `json:"name"`
	Parent           string  `json:"parent"`
	Partition        string  `json:"partition"`
	SharesNormalized *noValF `json:"shares_normalized"`
	Shares           *noVal  `json:"shares"`
	EffectiveUsage   *noValF `json:"effective_usage"`
	UsageNormalized  *noValF `json:"usage_normalized"`
	Usage            int64   `json:"usage"`
	Fairshare        struct {
		Factor *noValF `json:"factor"`
		Level  *noValF `json:"level"`
	} `json:"fairshare"`
	Type []string `json:"type"`
}

func float(f float64) *noValF {
	switch {
	case math.IsInf(f, 0):
		return &noValF{Infinite: true}
	case math.IsNaN(f):
		return &noValF{}
	}
	return &noValF{Set: true, Number: f}
}

// serveShares answers sshare's rows from the controller's fair-share
// state (Accounting.Shares: a user sees every account row and only their
// own user rows), narrowed by the accounts and users parameters as
// sshare -A and -u narrow them.
func serveShares(h *Handler, c *call) (any, error) {
	q := c.r.URL.Query()
	accounts, users := splitList(q.Get("accounts")), splitList(q.Get("users"))
	resp, err := h.b.Accounting.Shares(c.ctx, &pb.SharesRequest{})
	if err != nil {
		return nil, err
	}
	out := &sharesResp{Shares: sharesMsg{Shares: []*shareRow{}}}
	for _, a := range resp.GetAssociations() {
		if a.GetParent() == "" && !a.GetUser() && !a.GetZeroShares() {
			out.Shares.TotalShares += int64(max(a.GetShares(), 1))
		}
	}
	for i, r := range resp.GetRows() {
		account, user, _ := strings.Cut(r.GetKey(), "/")
		if len(accounts) > 0 && !slices.Contains(accounts, account) {
			continue
		}
		if len(users) > 0 && (!r.GetUser() || !slices.Contains(users, user)) {
			continue
		}
		out.Shares.Shares = append(out.Shares.Shares, h.toShareRow(int32(i+1), r, parentOf(resp.GetAssociations(), r)))
	}
	return out, nil
}

// parentOf is the row's parent account as sshare names it ("root" for
// top-level accounts, nothing for the root itself).
func parentOf(assocs []*pb.ShareAssociation, r *pb.ShareRow) string {
	if r.GetKey() == "" {
		return ""
	}
	for _, a := range assocs {
		if a.GetKey() == r.GetKey() {
			if a.GetParent() == "" {
				return "root"
			}
			return a.GetParent()
		}
	}
	return "root"
}

func (h *Handler) toShareRow(id int32, r *pb.ShareRow, parent string) *shareRow {
	name := r.GetKey()
	typ := "ASSOCIATION"
	switch {
	case name == "":
		name = "root"
	case r.GetUser():
		_, name, _ = strings.Cut(name, "/")
		typ = "USER"
	}
	s := &shareRow{ID: id, Cluster: h.b.ClusterName, Name: name, Parent: parent, SharesNormalized: float(r.GetNormShares()),
		Shares: num(int64(r.GetRawShares())), EffectiveUsage: float(r.GetEffectvUsage()), UsageNormalized: float(r.GetNormUsage()),
		Usage: int64(math.Round(r.GetRawUsage())), Type: []string{typ}}
	if r.GetSharesParent() {
		s.Shares = num(sharesUseParent)
	}
	s.Fairshare.Factor, s.Fairshare.Level = float(r.GetFairShare()), float(r.GetLevelFs())
	return s
}

// splitList reads a comma-separated parameter; empty selects everything.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
