package policy

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrLimits is wrapped by NewLimits errors; the message names the entity,
// the field and the value.
var ErrLimits = errors.New("policy: invalid limits")

// RootAccount is the association at the top of every account chain: its
// limits apply to the whole cluster (Slurm's root/cluster association).
const RootAccount = "root"

// LimitSet is one entity's limits: a QOS or an association (an account,
// or a user under an account). Zero counts, a zero MaxWall and TRES names
// that are not in a map mean "no limit".
type LimitSet struct {
	// MaxTRESPerJob is the most of each TRES one job may ask for
	// (sacctmgr MaxTRES / MaxTRESPerJob).
	MaxTRESPerJob TRES
	// MaxTRESPerNode is the most of cpu, mem and GPUs one job may ask for
	// on any one of its nodes (sacctmgr MaxTRESPerNode).
	MaxTRESPerNode TRES
	// MaxTRESPerUser (QOS only) is what one user's running jobs under the
	// QOS may hold (MaxTRESPU).
	MaxTRESPerUser TRES
	// MaxTRESPerAccount (QOS only) is what one account's running jobs
	// under the QOS may hold.
	MaxTRESPerAccount TRES
	// GrpTRES is what the entity's running jobs may hold in aggregate; an
	// account's aggregate includes its sub-accounts and users.
	GrpTRES TRES
	// MaxJobs is, on a QOS, MaxJobsPerUser (running jobs per user); on an
	// association, MaxJobs (running jobs of the user's association).
	MaxJobs int
	// MaxJobsPerAccount (QOS only) is running jobs per account.
	MaxJobsPerAccount int
	// MaxSubmitJobs is, on a QOS, MaxSubmitJobsPerUser; on an association,
	// MaxSubmitJobs: running plus pending jobs, enforced at submit.
	MaxSubmitJobs int
	// MaxSubmitJobsPerAccount (QOS only) is running plus pending jobs per account.
	MaxSubmitJobsPerAccount int
	// GrpJobs is running jobs of the entity in aggregate.
	GrpJobs int
	// GrpSubmitJobs is running plus pending jobs in aggregate, enforced at submit.
	GrpSubmitJobs int
	// MaxWall is the longest time limit one job may have (MaxWallDurationPerJob).
	MaxWall time.Duration
}

// QOSLimits is a QOS's limits and the flags that change how they apply.
type QOSLimits struct {
	Name   string
	Limits LimitSet
	// DenyOnLimit rejects at submit a job that on its own breaks a limit
	// (Max*, and Grp* treated like Max) instead of leaving it pending.
	DenyOnLimit bool
	// OverPartQOS makes the job's QOS win over the partition's QOS.
	OverPartQOS bool
}

// AssocLimits is one association's limits: an account's (User "") or a
// user's under an account. Account RootAccount is the cluster's.
type AssocLimits struct {
	Account, User string
	Limits        LimitSet
}

// LimitsConfig is everything NewLimits needs.
type LimitsConfig struct {
	QOS    []QOSLimits
	Assocs []AssocLimits
	// Tree is the account hierarchy (the associations fair-share uses);
	// only account entries are read. Accounts not in it are top-level.
	Tree []Association
	// PartitionQOS names the QOS attached to a partition (slurm.conf QOS=).
	PartitionQOS map[string]string
}

// Limits evaluates QOS and association limits with Slurm's precedence
// (resource_limits: partition QOS, job QOS, user association, account
// associations up the tree, root). It is immutable once built and safe
// for concurrent use; per-pass running totals live in a Ledger.
type Limits struct {
	qos     map[string]*qosEntry
	assoc   map[assocKey]*limitEntry
	parent  map[string]string
	chains  map[string][]string
	partQOS map[string]string
}

// limitEntry is a LimitSet with its TRES names sorted once, so checks
// walk them in a fixed order without sorting per job.
type limitEntry struct {
	LimitSet
	perJob, perNode, perUser, perAcct, grp []string
}

func newEntry(s LimitSet) *limitEntry {
	return &limitEntry{LimitSet: s, perJob: tresKeys(s.MaxTRESPerJob), perNode: tresKeys(s.MaxTRESPerNode), perUser: tresKeys(s.MaxTRESPerUser),
		perAcct: tresKeys(s.MaxTRESPerAccount), grp: tresKeys(s.GrpTRES)}
}

type qosEntry struct {
	limitEntry
	deny, overPart bool
}

type assocKey struct{ account, user string }

// NewLimits validates the configuration and indexes it.
func NewLimits(cfg LimitsConfig) (*Limits, error) {
	l := &Limits{qos: map[string]*qosEntry{}, assoc: map[assocKey]*limitEntry{}, parent: map[string]string{}, partQOS: map[string]string{}}
	for i := range cfg.QOS {
		q := cfg.QOS[i]
		if q.Name == "" {
			return nil, fmt.Errorf("%w: QOS #%d has no name", ErrLimits, i)
		}
		if _, dup := l.qos[q.Name]; dup {
			return nil, fmt.Errorf("%w: QOS %q is defined twice", ErrLimits, q.Name)
		}
		if err := q.Limits.validate(true); err != nil {
			return nil, fmt.Errorf("%w: QOS %s: %v", ErrLimits, q.Name, err)
		}
		l.qos[q.Name] = &qosEntry{limitEntry: *newEntry(q.Limits), deny: q.DenyOnLimit, overPart: q.OverPartQOS}
	}
	for i := range cfg.Assocs {
		a := cfg.Assocs[i]
		if a.Account == "" {
			return nil, fmt.Errorf("%w: association #%d (user %q) has no account", ErrLimits, i, a.User)
		}
		k := assocKey{a.Account, a.User}
		if _, dup := l.assoc[k]; dup {
			return nil, fmt.Errorf("%w: association %s is defined twice", ErrLimits, assocName(a.Account, a.User))
		}
		if err := a.Limits.validate(false); err != nil {
			return nil, fmt.Errorf("%w: association %s: %v", ErrLimits, assocName(a.Account, a.User), err)
		}
		l.assoc[k] = newEntry(a.Limits)
	}
	for _, t := range cfg.Tree {
		if !t.User && t.Key != "" {
			l.parent[t.Key] = t.Parent
		}
	}
	if err := l.checkTree(); err != nil {
		return nil, err
	}
	l.chains = map[string][]string{}
	for a := range l.parent {
		l.chains[a] = l.walkChain(a)
	}
	for k := range l.assoc {
		if _, ok := l.chains[k.account]; !ok {
			l.chains[k.account] = l.walkChain(k.account)
		}
	}
	for part, q := range cfg.PartitionQOS {
		if q == "" {
			continue
		}
		if _, ok := l.qos[q]; !ok {
			return nil, fmt.Errorf("%w: partition %s names QOS %q, which is not defined", ErrLimits, part, q)
		}
		l.partQOS[part] = q
	}
	return l, nil
}

// checkTree refuses parent cycles, which would make account chains endless.
func (l *Limits) checkTree() error {
	for a := range l.parent {
		seen := map[string]bool{}
		for x := a; x != ""; x = l.parent[x] {
			if seen[x] {
				return fmt.Errorf("%w: account tree has a cycle through %q", ErrLimits, x)
			}
			seen[x] = true
		}
	}
	return nil
}

func (s *LimitSet) validate(isQOS bool) error {
	counts := []struct {
		name string
		v    int
	}{{"MaxJobs", s.MaxJobs}, {"MaxJobsPerAccount", s.MaxJobsPerAccount}, {"MaxSubmitJobs", s.MaxSubmitJobs},
		{"MaxSubmitJobsPerAccount", s.MaxSubmitJobsPerAccount}, {"GrpJobs", s.GrpJobs}, {"GrpSubmitJobs", s.GrpSubmitJobs}}
	for _, c := range counts {
		if c.v < 0 {
			return fmt.Errorf("%s=%d must not be negative (0 means no limit)", c.name, c.v)
		}
	}
	if s.MaxWall < 0 {
		return fmt.Errorf("MaxWall=%v must not be negative", s.MaxWall)
	}
	if !isQOS {
		switch {
		case len(s.MaxTRESPerUser) > 0:
			return fmt.Errorf("MaxTRESPerUser=%s is a QOS limit", s.MaxTRESPerUser)
		case len(s.MaxTRESPerAccount) > 0:
			return fmt.Errorf("MaxTRESPerAccount=%s is a QOS limit", s.MaxTRESPerAccount)
		case s.MaxJobsPerAccount > 0:
			return fmt.Errorf("MaxJobsPerAccount=%d is a QOS limit", s.MaxJobsPerAccount)
		case s.MaxSubmitJobsPerAccount > 0:
			return fmt.Errorf("MaxSubmitJobsPerAccount=%d is a QOS limit", s.MaxSubmitJobsPerAccount)
		}
	}
	fields := []struct {
		name string
		t    TRES
	}{{"MaxTRESPerJob", s.MaxTRESPerJob}, {"MaxTRESPerNode", s.MaxTRESPerNode}, {"MaxTRESPerUser", s.MaxTRESPerUser}, {"MaxTRESPerAccount", s.MaxTRESPerAccount}, {"GrpTRES", s.GrpTRES}}
	for k := range s.MaxTRESPerNode {
		if k != "cpu" && k != "mem" && k != "gres/gpu" && !strings.HasPrefix(k, "gres/gpu:") {
			return fmt.Errorf("MaxTRESPerNode: %s is not limited per node (cpu, mem, gres/gpu[:type])", k)
		}
	}
	for _, f := range fields {
		field := f.name
		for _, k := range tresKeys(f.t) {
			v := f.t[k]
			if _, err := tresName(k); err != nil || k != lower(k) {
				return fmt.Errorf("%s: TRES name %q is not a lower-case TRES name", field, k)
			}
			if v < 0 {
				return fmt.Errorf("%s: %s=%d must not be negative", field, k, v)
			}
		}
	}
	return nil
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func assocName(account, user string) string {
	if user == "" {
		return account
	}
	return account + "/" + user
}

// qosChain returns the QOS whose limits apply, in precedence order: the
// partition's QOS, then the job's (swapped when the job's QOS has
// OverPartQOS). Unknown or empty names come back as "".
func (l *Limits) qosChain(j LimitJob) (first, second string) {
	pq := l.partQOS[j.Partition]
	jq := j.QOS
	if _, ok := l.qos[jq]; !ok {
		jq = ""
	}
	if jq == pq {
		return jq, ""
	}
	if jq != "" && l.qos[jq].overPart {
		return jq, pq
	}
	return pq, jq
}

// accountChain is the account and its ancestors, then the root (shared;
// do not modify).
func (l *Limits) accountChain(account string) []string {
	if c, ok := l.chains[account]; ok {
		return c
	}
	return l.walkChain(account)
}

func (l *Limits) walkChain(account string) []string {
	out := make([]string, 0, 4)
	for a := account; a != "" && a != RootAccount && len(out) < 64; a = l.parent[a] {
		out = append(out, a)
	}
	return append(out, RootAccount)
}
