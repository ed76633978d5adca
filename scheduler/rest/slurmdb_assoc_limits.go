package rest

import (
	"slices"
	"strings"

	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/policy"
)

// qosLimits is v0.0.44_qos's limits: what Parity enforces, each unset
// one INFINITE as slurmrestd sends an unset limit.
type qosLimits struct {
	GraceTime int32 `json:"grace_time"`
	Max       struct {
		ActiveJobs struct {
			Count *noVal `json:"count"`
		} `json:"active_jobs"`
		Jobs struct {
			Count      *noVal `json:"count"`
			ActiveJobs struct {
				Per perAcctUser `json:"per"`
			} `json:"active_jobs"`
			Per perAcctUser `json:"per"`
		} `json:"jobs"`
		TRES struct {
			Total []tres `json:"total"`
			Per   struct {
				Account []tres `json:"account"`
				Job     []tres `json:"job"`
				Node    []tres `json:"node"`
				User    []tres `json:"user"`
			} `json:"per"`
		} `json:"tres"`
		WallClock struct {
			Per struct {
				Job *noVal `json:"job"`
			} `json:"per"`
		} `json:"wall_clock"`
	} `json:"max"`
}

type perAcctUser struct {
	Account *noVal `json:"account"`
	User    *noVal `json:"user"`
}

// newQOSLimits fills the limits of q from the state in force; TRES carry
// the ids the cluster's TRES list gives them.
func newQOSLimits(cfg *config.Cluster, q config.QOS) *qosLimits {
	l, ids := &qosLimits{GraceTime: int32(q.GraceTime.Seconds())}, clusterTRES(cfg)
	s := q.Limits
	m := &l.Max
	m.ActiveJobs.Count = numOrInf(int64(s.GrpJobs))
	m.Jobs.Count = numOrInf(int64(s.GrpSubmitJobs))
	m.Jobs.ActiveJobs.Per = perAcctUser{Account: numOrInf(int64(s.MaxJobsPerAccount)), User: numOrInf(int64(s.MaxJobs))}
	m.Jobs.Per = perAcctUser{Account: numOrInf(int64(s.MaxSubmitJobsPerAccount)), User: numOrInf(int64(s.MaxSubmitJobs))}
	m.TRES.Total = limitTRES(ids, s.GrpTRES)
	m.TRES.Per.Account, m.TRES.Per.Job = limitTRES(ids, s.MaxTRESPerAccount), limitTRES(ids, s.MaxTRESPerJob)
	m.TRES.Per.Node, m.TRES.Per.User = limitTRES(ids, s.MaxTRESPerNode), limitTRES(ids, s.MaxTRESPerUser)
	m.WallClock.Per.Job = numOrInf(int64(s.MaxWall.Minutes())) // slurmdbd keeps MaxWall in minutes
	return l
}

// limitTRES is a limit's TRES as v0.0.44_tres_list, by id ("gres/gpu" is
// type gres, name gpu).
func limitTRES(ids []tres, t policy.TRES) []tres {
	out := []tres{}
	for k, v := range t {
		typ, name, _ := strings.Cut(k, "/")
		out = append(out, tres{Type: typ, Name: name, ID: tresID(ids, typ, name), Count: v})
	}
	slices.SortFunc(out, func(a, b tres) int { return int(a.ID) - int(b.ID) })
	return out
}
