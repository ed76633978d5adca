package policy

import (
	"errors"
	"strconv"
	"time"
)

// ErrPolicy is what a submission that breaks a limit is rejected with;
// its text is Slurm's, so scripts that match it keep working.
var ErrPolicy = errors.New("Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)")

// LimitError is a rejected submission: ErrPolicy and the limit it broke.
type LimitError struct{ Violation Violation }

func (e *LimitError) Error() string { return ErrPolicy.Error() + ": " + e.Violation.String() }

// Unwrap lets errors.Is(err, ErrPolicy) match.
func (e *LimitError) Unwrap() error { return ErrPolicy }

// Violation is one broken limit: the pending reason squeue shows, the
// limit (sacctmgr's field name), the TRES it is on ("" for job counts and
// wall time), its value, what the scope already holds and what the job
// asks for.
type Violation struct {
	Reason string
	Limit  string
	TRES   string
	Max    int64
	Held   int64
	Want   int64
	// Entity is where the limit is set: "QOS normal", "association
	// physics/alice", "account physics".
	Entity string
	// Holder is whose usage Held counts ("user alice", "account physics",
	// "QOS normal"); empty for per-job limits.
	Holder string
	wall   bool
}

// String renders the violation for people, e.g. "MaxTRESPerJob
// gres/gpu=8 for QOS normal, job asks 16" or "MaxTRESPerUser gres/gpu=8
// for QOS normal: user alice holds 6, job asks 4".
func (v Violation) String() string {
	var s string
	switch {
	case v.wall:
		s = v.Limit + " " + formatWall(v.Max)
	case v.TRES != "":
		s = v.Limit + " " + v.TRES + "=" + FormatTRESValue(v.TRES, v.Max)
	default:
		s = v.Limit + "=" + strconv.FormatInt(v.Max, 10)
	}
	s += " for " + v.Entity
	want := strconv.FormatInt(v.Want, 10)
	switch {
	case v.wall:
		return s + ", job asks " + formatWall(v.Want)
	case v.TRES != "":
		want = FormatTRESValue(v.TRES, v.Want)
	default:
		want += " more job(s)"
	}
	if v.Holder == "" {
		return s + ", job asks " + want
	}
	held := strconv.FormatInt(v.Held, 10)
	if v.TRES != "" {
		held = FormatTRESValue(v.TRES, v.Held)
	}
	return s + ": " + v.Holder + " holds " + held + ", job asks " + want
}

// formatWall renders seconds as [D-]HH:MM:SS; 0 or less is "UNLIMITED".
func formatWall(secs int64) string {
	if secs <= 0 {
		return "UNLIMITED"
	}
	d, r := secs/86400, secs%86400
	two := func(n int64) string {
		if n < 10 {
			return "0" + strconv.FormatInt(n, 10)
		}
		return strconv.FormatInt(n, 10)
	}
	s := two(r/3600) + ":" + two(r%3600/60) + ":" + two(r%60)
	if d > 0 {
		s = strconv.FormatInt(d, 10) + "-" + s
	}
	return s
}

// source is one entity whose limits apply to a job, in precedence order.
type source struct {
	qos     bool
	name    string // QOS name, or the association's account
	user    string // association user ("" for an account)
	set     *limitEntry
	deny    bool
	isUser  bool // the user's own association
	isChain bool // an account association above the user
}

func (s source) entity() string {
	switch {
	case s.qos:
		return "QOS " + s.name
	case s.isUser:
		return "association " + assocName(s.name, s.user)
	}
	return "account " + s.name
}

// sources lists the entities whose limits apply to the job: partition and
// job QOS, the user's association, then the account associations up to
// the root. Entities without limits are skipped.
func (l *Limits) sources(j LimitJob, buf []source) []source {
	q1, q2 := l.qosChain(j)
	for _, q := range [2]string{q1, q2} {
		if ql := l.qos[q]; q != "" && ql != nil {
			buf = append(buf, source{qos: true, name: q, set: &ql.limitEntry, deny: ql.deny})
		}
	}
	if set := l.assoc[assocKey{j.Account, j.User}]; set != nil && j.User != "" {
		buf = append(buf, source{name: j.Account, user: j.User, set: set, isUser: true})
	}
	for _, a := range l.accountChain(j.Account) {
		if set := l.assoc[assocKey{a, ""}]; set != nil {
			buf = append(buf, source{name: a, set: set, isChain: true})
		}
	}
	return buf
}

// definedEarlier reports whether a source before i sets key in the TRES
// map pick selects: Max limits are taken from the first place that
// defines them.
func definedEarlier(srcs []source, i int, key string, pick func(*LimitSet) TRES, onlyQOS bool) bool {
	for _, s := range srcs[:i] {
		if onlyQOS && !s.qos {
			continue
		}
		if _, ok := pick(&s.set.LimitSet)[key]; ok {
			return true
		}
	}
	return false
}

func perJobTRES(s *LimitSet) TRES  { return s.MaxTRESPerJob }
func perNodeTRES(s *LimitSet) TRES { return s.MaxTRESPerNode }
func perUserTRES(s *LimitSet) TRES { return s.MaxTRESPerUser }
func perAcctTRES(s *LimitSet) TRES { return s.MaxTRESPerAccount }

// Check reports whether a job asking for want may start now given what
// running jobs hold (g), with the first limit it would break. Per-job
// limits (MaxTRESPerJob, MaxWall) come first, then the QOS limits
// (GrpJobs, MaxJobsPerUser, MaxJobsPerAccount, GrpTRES, MaxTRESPerUser,
// MaxTRESPerAccount), then the association limits (MaxJobs, GrpJobs,
// GrpTRES, from the user's association up to the root). A TRES limit only
// stops a job that asks for some of that TRES.
func (l *Limits) Check(g *Ledger, j LimitJob, want *Amount) (Violation, bool) {
	var buf [8]source
	srcs := l.sources(j, buf[:0])
	if v, bad := perJob(srcs, j, want); bad {
		return v, false
	}
	if v, bad := l.running(g, srcs, j, want); bad {
		return v, false
	}
	return Violation{}, true
}

// MaxWall is the wall-time limit that applies to the job (first defined
// along the precedence chain), 0 for none; Slurm uses it as the time
// limit of a job that gives none.
func (l *Limits) MaxWall(j LimitJob) time.Duration {
	var buf [8]source
	for _, s := range l.sources(j, buf[:0]) {
		if s.set.MaxWall > 0 {
			return s.set.MaxWall
		}
	}
	return 0
}

func perJob(srcs []source, j LimitJob, want *Amount) (Violation, bool) {
	for i, s := range srcs {
		for _, k := range s.set.perJob {
			max := s.set.MaxTRESPerJob[k]
			if w := want.Get(k); w > max && !definedEarlier(srcs, i, k, perJobTRES, false) {
				return Violation{Reason: tresReason("MaxTRESPerJob", s.qos, classOf(k)), Limit: "MaxTRESPerJob", TRES: k, Max: max, Want: w, Entity: s.entity()}, true
			}
		}
		for _, k := range s.set.perNode {
			max := s.set.MaxTRESPerNode[k]
			if w := want.GetPerNode(k); w > max && !definedEarlier(srcs, i, k, perNodeTRES, false) {
				return Violation{Reason: tresReason("MaxTRESPerNode", s.qos, classOf(k)), Limit: "MaxTRESPerNode", TRES: k, Max: max, Want: w, Entity: s.entity()}, true
			}
		}
	}
	for _, s := range srcs {
		if s.set.MaxWall <= 0 {
			continue
		}
		if j.Wall <= 0 || j.Wall > s.set.MaxWall {
			r := "AssocMaxWallDurationPerJobLimit"
			if s.qos {
				r = "QOSMaxWallDurationPerJobLimit"
			}
			return Violation{Reason: r, Limit: "MaxWall", Max: int64(s.set.MaxWall / time.Second), Want: int64(j.Wall / time.Second), Entity: s.entity(), wall: true}, true
		}
		break
	}
	return Violation{}, false
}

// running checks the limits on what running jobs hold.
func (l *Limits) running(g *Ledger, srcs []source, j LimitJob, want *Amount) (Violation, bool) {
	qosMaxJobs := false
	for i, s := range srcs {
		if !s.qos {
			continue
		}
		qosHeld := g.get(ledgerKey{scopeQOS, s.name, ""})
		userHeld := g.get(ledgerKey{scopeUserQOS, j.User, s.name})
		acctHeld := g.get(ledgerKey{scopeAcctQOS, j.Account, s.name})
		user, acct := "user "+j.User, "account "+j.Account
		if v, bad := jobCount(s.set.GrpJobs, qosHeld, want, "QOSGrpJobsLimit", "GrpJobs", s, "QOS "+s.name); bad {
			return v, true
		}
		if s.set.MaxJobs > 0 && !qosMaxJobs {
			qosMaxJobs = true
			if v, bad := jobCount(s.set.MaxJobs, userHeld, want, "QOSMaxJobsPerUserLimit", "MaxJobsPerUser", s, user); bad {
				return v, true
			}
		}
		if s.set.MaxJobsPerAccount > 0 && !earlierQOSCount(srcs, i, func(x *LimitSet) int { return x.MaxJobsPerAccount }) {
			if v, bad := jobCount(s.set.MaxJobsPerAccount, acctHeld, want, "MaxJobsPerAccount", "MaxJobsPerAccount", s, acct); bad {
				return v, true
			}
		}
		if v, bad := tresOver(s.set.GrpTRES, s.set.grp, "GrpTRES", qosHeld, want, s, "QOS "+s.name, nil, srcs, i); bad {
			return v, true
		}
		if v, bad := tresOver(s.set.MaxTRESPerUser, s.set.perUser, "MaxTRESPerUser", userHeld, want, s, user, perUserTRES, srcs, i); bad {
			return v, true
		}
		if v, bad := tresOver(s.set.MaxTRESPerAccount, s.set.perAcct, "MaxTRESPerAccount", acctHeld, want, s, acct, perAcctTRES, srcs, i); bad {
			return v, true
		}
	}
	assocMaxJobs := qosMaxJobs
	userAssoc := g.get(ledgerKey{scopeAssoc, j.Account, j.User})
	for i, s := range srcs {
		if s.qos {
			continue
		}
		if s.set.MaxJobs > 0 && !assocMaxJobs {
			assocMaxJobs = true
			if v, bad := jobCount(s.set.MaxJobs, userAssoc, want, "AssocMaxJobsLimit", "MaxJobs", s, "association "+assocName(j.Account, j.User)); bad {
				return v, true
			}
		}
		held, holder := userAssoc, "association "+assocName(j.Account, j.User)
		if !s.isUser {
			held, holder = g.get(ledgerKey{scopeAccount, s.name, ""}), "account "+s.name
		}
		if v, bad := jobCount(s.set.GrpJobs, held, want, "AssocGrpJobsLimit", "GrpJobs", s, holder); bad {
			return v, true
		}
		if v, bad := tresOver(s.set.GrpTRES, s.set.grp, "GrpTRES", held, want, s, holder, nil, srcs, i); bad {
			return v, true
		}
	}
	return Violation{}, false
}

func earlierQOSCount(srcs []source, i int, pick func(*LimitSet) int) bool {
	for _, s := range srcs[:i] {
		if s.qos && pick(&s.set.LimitSet) > 0 {
			return true
		}
	}
	return false
}

func jobCount(max int, held, want *Amount, reason, limit string, s source, holder string) (Violation, bool) {
	if max <= 0 || want.Jobs <= 0 || held.Jobs+want.Jobs <= max {
		return Violation{}, false
	}
	return Violation{Reason: reason, Limit: limit, Max: int64(max), Held: int64(held.Jobs), Want: int64(want.Jobs), Entity: s.entity(), Holder: holder}, true
}

// tresOver checks one TRES limit map against held+want. With pick set,
// a key defined by an earlier QOS is skipped (first definition wins).
func tresOver(lim TRES, keys []string, limit string, held, want *Amount, s source, holder string, pick func(*LimitSet) TRES, srcs []source, i int) (Violation, bool) {
	for _, k := range keys {
		w := want.Get(k)
		if w <= 0 {
			continue
		}
		if pick != nil && definedEarlier(srcs, i, k, pick, true) {
			continue
		}
		if h := held.Get(k); h+w > lim[k] {
			return Violation{Reason: tresReason(limit, s.qos, classOf(k)), Limit: limit, TRES: k, Max: lim[k], Held: h, Want: w, Entity: s.entity(), Holder: holder}, true
		}
	}
	return Violation{}, false
}

// tresReason is the pending reason Slurm shows for a TRES limit.
func tresReason(limit string, qos bool, c tresClass) string {
	var names [6]string // indexed by tresClass; classOther stays empty
	switch {
	case limit == "MaxTRESPerJob" && qos:
		names = [6]string{"", "QOSMaxCpuPerJobLimit", "QOSMaxMemoryPerJob", "QOSMaxNodePerJobLimit", "QOSMaxGRESPerJob", "QOSMaxBillingPerJob"}
	case limit == "MaxTRESPerJob":
		names = [6]string{"", "AssocMaxCpuPerJobLimit", "AssocMaxMemPerJob", "AssocMaxNodePerJobLimit", "AssocMaxGRESPerJob", "AssocMaxBillingPerJob"}
	case limit == "MaxTRESPerNode" && qos:
		names = [6]string{"", "QOSMaxCpuPerNode", "QOSMaxMemoryPerNode", "", "QOSMaxGRESPerNode", "QOSMaxBillingPerNode"}
	case limit == "MaxTRESPerNode":
		names = [6]string{"", "AssocMaxCpuPerNode", "AssocMaxMemPerNode", "", "AssocMaxGRESPerNode", "AssocMaxBillingPerNode"}
	case limit == "MaxTRESPerUser":
		names = [6]string{"", "QOSMaxCpuPerUserLimit", "QOSMaxMemoryPerUser", "QOSMaxNodePerUserLimit", "QOSMaxGRESPerUser", "QOSMaxBillingPerUser"}
	case limit == "MaxTRESPerAccount":
		names = [6]string{"", "MaxCpuPerAccount", "MaxMemoryPerAccount", "MaxNodePerAccount", "MaxGRESPerAccount", "MaxBillingPerAccount"}
	case limit == "GrpTRES" && qos:
		names = [6]string{"", "QOSGrpCpuLimit", "QOSGrpMemLimit", "QOSGrpNodeLimit", "QOSGrpGRES", "QOSGrpBilling"}
	case limit == "GrpTRES":
		names = [6]string{"", "AssocGrpCpuLimit", "AssocGrpMemLimit", "AssocGrpNodeLimit", "AssocGrpGRES", "AssocGrpBilling"}
	}
	if r := names[c]; r != "" {
		return r
	}
	return "AccountingPolicy"
}

// CheckSubmit decides a submission: submitted holds what the submitter's
// jobs already count (running and pending, each array task a job), want
// what the new job adds (Jobs = its task count). Submit-count limits
// (MaxSubmitJobs, MaxSubmitJobsPerAccount, GrpSubmitJobs) always reject;
// per-job limits (MaxTRESPerJob, MaxTRESPerNode, MaxWall) reject when the job has no QOS
// or its QOS has DenyOnLimit; with DenyOnLimit, so does a job that alone
// breaks a running limit (Grp* treated like Max*). Anything else is
// accepted and left to schedule time. The error is a *LimitError.
func (l *Limits) CheckSubmit(submitted *Ledger, j LimitJob, want Amount) error {
	var buf [8]source
	srcs := l.sources(j, buf[:0])
	if v, bad := l.submitCounts(submitted, srcs, j, &want); bad {
		return &LimitError{v}
	}
	_, hasQOS := l.qos[j.QOS]
	deny := false
	for _, s := range srcs {
		deny = deny || s.deny
	}
	one := want
	one.Jobs = 1
	if !hasQOS || deny {
		if v, bad := perJob(srcs, j, &one); bad {
			return &LimitError{v}
		}
	}
	if deny {
		// The job alone, on an idle cluster: Grp limits count like Max.
		if v, bad := l.running(l.NewLedger(), srcs, j, &one); bad {
			return &LimitError{v}
		}
	}
	return nil
}

func (l *Limits) submitCounts(g *Ledger, srcs []source, j LimitJob, want *Amount) (Violation, bool) {
	qosMax := false
	for i, s := range srcs {
		if !s.qos {
			continue
		}
		if s.set.MaxSubmitJobs > 0 && !qosMax {
			qosMax = true
			if v, bad := jobCount(s.set.MaxSubmitJobs, g.get(ledgerKey{scopeUserQOS, j.User, s.name}), want, "QOSMaxSubmitJobPerUserLimit", "MaxSubmitJobsPerUser", s, "user "+j.User); bad {
				return v, true
			}
		}
		if s.set.MaxSubmitJobsPerAccount > 0 && !earlierQOSCount(srcs, i, func(x *LimitSet) int { return x.MaxSubmitJobsPerAccount }) {
			if v, bad := jobCount(s.set.MaxSubmitJobsPerAccount, g.get(ledgerKey{scopeAcctQOS, j.Account, s.name}), want, "MaxSubmitJobsPerAccount", "MaxSubmitJobsPerAccount", s, "account "+j.Account); bad {
				return v, true
			}
		}
		if v, bad := jobCount(s.set.GrpSubmitJobs, g.get(ledgerKey{scopeQOS, s.name, ""}), want, "QOSGrpSubmitJobsLimit", "GrpSubmitJobs", s, "QOS "+s.name); bad {
			return v, true
		}
	}
	userAssoc := g.get(ledgerKey{scopeAssoc, j.Account, j.User})
	for _, s := range srcs {
		if s.qos {
			continue
		}
		if s.set.MaxSubmitJobs > 0 && !qosMax {
			qosMax = true
			if v, bad := jobCount(s.set.MaxSubmitJobs, userAssoc, want, "AssocMaxSubmitJobLimit", "MaxSubmitJobs", s, "association "+assocName(j.Account, j.User)); bad {
				return v, true
			}
		}
		held, holder := userAssoc, "association "+assocName(j.Account, j.User)
		if !s.isUser {
			held, holder = g.get(ledgerKey{scopeAccount, s.name, ""}), "account "+s.name
		}
		if v, bad := jobCount(s.set.GrpSubmitJobs, held, want, "AssocGrpSubmitJobsLimit", "GrpSubmitJobs", s, holder); bad {
			return v, true
		}
	}
	return Violation{}, false
}
