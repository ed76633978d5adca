package policy

import (
	"math"
	"sort"
)

// ShareRow is one sshare line (sshare -l columns).
type ShareRow struct {
	Key   string // association key; "" is the root row
	Depth int    // root 0, top-level accounts 1, … (sshare's indentation)
	User  bool
	// RawShares is the configured fairshare= value (1 by default; 0 for
	// fairshare=parent, which SharesParent marks and sshare prints "parent").
	RawShares    float64
	SharesParent bool
	// NormShares: under Fair Tree the share among siblings
	// (RawShares / Σ sibling RawShares); under classic the share of the whole
	// cluster (the product of that ratio down the tree). The root row has 1.
	NormShares float64
	// RawUsage is decayed usage of the association and everything below it.
	RawUsage float64
	// NormUsage is RawUsage / the root's RawUsage.
	NormUsage float64
	// EffectvUsage: under Fair Tree RawUsage / the parent's RawUsage; under
	// classic the documented effective usage
	// UE = NormUsage + (UE_parent − NormUsage) × local share (top tier: NormUsage).
	EffectvUsage float64
	// FairShare is the factor jobs use. Under Fair Tree only users have one
	// (their rank position); accounts and the root carry 0, as sshare leaves
	// them blank. Under classic every association has 2^(−UE/NormShares).
	FairShare float64
	// LevelFS is NormShares/EffectvUsage among siblings (computed in both
	// modes): +Inf when the association has shares but no usage, 0 when it
	// has no shares. The root row has 1.
	LevelFS float64
}

// FairShares computes every association's fair-share factor from raw
// (already decayed) usage per key, with Fair Tree or "classic"
// 2^(-EffectvUsage/NormShares). Usage may be given for any association
// (an account's own usage adds to what its children used); keys not in the
// tree and negative or NaN values are ignored. Unknown algo names mean Fair
// Tree (PriorityConfig.Validate rejects them earlier). Rows are in tree order,
// as sshare prints them, beginning with the root row.
func FairShares(tree *AccountTree, usage map[string]float64, algo string) []ShareRow {
	if tree == nil {
		return nil
	}
	n := len(tree.nodes)
	rows := make([]ShareRow, n)
	raw := make([]float64, n)
	for k, u := range usage {
		if i, ok := tree.index[k]; ok && u > 0 && !math.IsInf(u, 1) {
			raw[i] += u
		}
	}
	// Pre-order puts children after parents, so a reverse sweep sums subtrees.
	for i := n - 1; i > 0; i-- {
		raw[tree.nodes[i].parent] += raw[i]
	}
	total := raw[0]
	for i, nd := range tree.nodes {
		rows[i] = ShareRow{Key: nd.assoc.Key, Depth: nd.depth, User: nd.assoc.User, RawShares: nd.shares, SharesParent: nd.assoc.SharesParent, RawUsage: raw[i]}
		if total > 0 {
			rows[i].NormUsage = raw[i] / total
		}
	}
	level := levelFS(tree, raw)
	rows[0].NormShares, rows[0].LevelFS = 1, 1
	if total > 0 {
		rows[0].EffectvUsage = 1
	}
	for i := 1; i < n; i++ {
		rows[i].LevelFS = level[i].fs
	}
	if algo == AlgoClassic {
		classic(tree, rows, level)
		return rows
	}
	for i := 1; i < n; i++ {
		rows[i].NormShares, rows[i].EffectvUsage = level[i].shares, level[i].usage
	}
	fairTree(tree, rows, level)
	return rows
}

// FactorOf returns the fair-share factor of key from rows, 0 for unknown keys.
func FactorOf(rows []ShareRow, key string) float64 {
	for _, r := range rows {
		if r.Key == key {
			return r.FairShare
		}
	}
	return 0
}

// FactorMap indexes rows' factors by key, for callers scoring many jobs.
func FactorMap(rows []ShareRow) map[string]float64 {
	m := make(map[string]float64, len(rows))
	for _, r := range rows {
		m[r.Key] = r.FairShare
	}
	return m
}

// levelStat is one association's standing among its siblings.
type levelStat struct {
	shares float64 // S: own raw shares / siblings' sum
	usage  float64 // U: own raw usage / parent's raw usage
	fs     float64 // S/U, +Inf when U = 0 < S, 0 when S = 0
}

func levelFS(tree *AccountTree, raw []float64) []levelStat {
	out := make([]levelStat, len(tree.nodes))
	for p, nd := range tree.nodes {
		var sum float64
		for _, c := range nd.children {
			sum += tree.nodes[c].shares
		}
		for _, c := range nd.children {
			var st levelStat
			if sum > 0 {
				st.shares = tree.nodes[c].shares / sum
			}
			if raw[p] > 0 {
				st.usage = raw[c] / raw[p]
			}
			// S = 0 wins over U = 0: no shares means last, even unused.
			switch {
			case tree.nodes[c].assoc.SharesParent:
				st.shares, st.fs = out[p].shares, math.Inf(1)
				if p == 0 {
					st.shares = 1
				}
			case st.shares == 0:
				st.fs = 0
			case st.usage == 0:
				st.fs = math.Inf(1)
			default:
				st.fs = st.shares / st.usage
			}
			out[c] = st
		}
	}
	return out
}

// fairTree ranks users depth-first over siblings sorted by LevelFS.
func fairTree(tree *AccountTree, rows []ShareRow, level []levelStat) {
	if tree.users == 0 {
		return
	}
	r := ranker{tree: tree, rows: rows, level: level, next: tree.users, rank: tree.users}
	r.walk(tree.nodes[0].children, false)
}

type ranker struct {
	tree  *AccountTree
	rows  []ShareRow
	level []levelStat
	next  int // the rank the next untied user gets; counts down per user
	rank  int // the rank last given, shared by tied users
}

// walk visits one sibling set (possibly merged from tied accounts).
// accountTied carries a tie of the parent with its predecessor down to the
// first child, so that child shares the predecessor's rank.
func (r *ranker) walk(set []int, accountTied bool) {
	sorted := append([]int(nil), set...)
	sort.SliceStable(sorted, func(a, b int) bool {
		x, y := sorted[a], sorted[b]
		if r.level[x].fs != r.level[y].fs {
			return r.level[x].fs > r.level[y].fs
		}
		if ux, uy := r.tree.nodes[x].assoc.User, r.tree.nodes[y].assoc.User; ux != uy {
			return ux // users before accounts, so a tied account inherits the user's rank
		}
		return x < y
	})
	for i := 0; i < len(sorted); i++ {
		c := sorted[i]
		fs := r.level[c].fs
		tied := accountTied || (i > 0 && r.level[sorted[i-1]].fs == fs)
		accountTied = false
		if r.tree.nodes[c].assoc.User {
			if !tied {
				r.rank = r.next
			}
			r.rows[c].FairShare = float64(r.rank) / float64(r.tree.users)
			r.next--
			continue
		}
		// Tied sibling accounts are one account for ranking: merge children.
		merged := append([]int(nil), r.tree.nodes[c].children...)
		for i+1 < len(sorted) && !r.tree.nodes[sorted[i+1]].assoc.User && r.level[sorted[i+1]].fs == fs {
			i++
			merged = append(merged, r.tree.nodes[sorted[i]].children...)
		}
		r.walk(merged, tied)
	}
}

// classic fills NormShares, EffectvUsage and FairShare with the documented
// classic algorithm (FairShareDampeningFactor 1).
func classic(tree *AccountTree, rows []ShareRow, level []levelStat) {
	for i := 1; i < len(tree.nodes); i++ {
		p := tree.nodes[i].parent
		if tree.nodes[i].assoc.SharesParent && p != 0 {
			rows[i].NormShares, rows[i].EffectvUsage, rows[i].FairShare = rows[p].NormShares, rows[p].EffectvUsage, rows[p].FairShare
			continue
		}
		local := level[i].shares // a top-level fairshare=parent user stands for the whole cluster (1)
		rows[i].NormShares = rows[p].NormShares * local
		ua := rows[i].NormUsage
		if p == 0 {
			rows[i].EffectvUsage = ua
		} else {
			rows[i].EffectvUsage = ua + (rows[p].EffectvUsage-ua)*local
		}
		rows[i].FairShare = ClassicFactor(rows[i].EffectvUsage, rows[i].NormShares)
	}
}

// ClassicFactor is 2^(−usage/shares): 0.5 exactly on target, above 0.5
// under-served, below over-served; 0 when shares is 0.
func ClassicFactor(effectiveUsage, normShares float64) float64 {
	if normShares <= 0 || math.IsNaN(normShares) {
		return 0
	}
	return unit(math.Exp2(-effectiveUsage / normShares))
}
