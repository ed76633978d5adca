package policy

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// genTree draws a random account tree with users, some shareless, and
// usages drawn from a small set so that ties are common.
func genTree(t *rapid.T) (*AccountTree, map[string]float64) {
	nAcct := rapid.IntRange(1, 6).Draw(t, "accounts")
	nUser := rapid.IntRange(1, 12).Draw(t, "users")
	var assocs []Association
	accounts := []string{""}
	shares := func(label string) (float64, bool) {
		s := rapid.IntRange(0, 4).Draw(t, label)
		return float64(s), s == 0
	}
	for i := range nAcct {
		key := fmt.Sprintf("a%d", i)
		parent := accounts[rapid.IntRange(0, len(accounts)-1).Draw(t, key+".parent")]
		s, zero := shares(key + ".shares")
		assocs = append(assocs, Association{Key: key, Parent: parent, Shares: s, ZeroShares: zero})
		accounts = append(accounts, key)
	}
	usage := map[string]float64{}
	for i := range nUser {
		key := fmt.Sprintf("u%d", i)
		parent := accounts[rapid.IntRange(1, len(accounts)-1).Draw(t, key+".parent")]
		s, zero := shares(key + ".shares")
		assocs = append(assocs, Association{Key: key, Parent: parent, Shares: s, ZeroShares: zero, User: true})
		usage[key] = float64(rapid.SampledFrom([]int{0, 0, 1, 2, 5, 10, 100}).Draw(t, key+".usage"))
	}
	tree, err := NewAccountTree(assocs)
	if err != nil {
		t.Fatalf("generated tree rejected: %v", err)
	}
	return tree, usage
}

func TestFairTreeProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tree, usage := genTree(t)
		rows := FairShares(tree, usage, AlgoFairTree)
		byKey := map[string]ShareRow{}
		top := 0.0
		for _, r := range rows {
			byKey[r.Key] = r
			if r.User {
				if r.FairShare <= 0 || r.FairShare > 1 {
					t.Fatalf("user %s factor %v outside (0,1]", r.Key, r.FairShare)
				}
				top = max(top, r.FairShare)
			}
		}
		if top != 1 {
			t.Fatalf("the best-ranked user has factor %v, want 1", top)
		}
		// Within one parent, strictly higher LevelFS never ranks lower; for
		// accounts, every user below the better account ranks at least as high
		// as every user below the worse one.
		for _, p := range tree.nodes {
			for _, x := range p.children {
				for _, y := range p.children {
					a, b := tree.nodes[x], tree.nodes[y]
					ra, rb := byKey[a.assoc.Key], byKey[b.assoc.Key]
					if !(ra.LevelFS > rb.LevelFS) {
						continue
					}
					lowA, _ := minMaxUsers(tree, rows, x)
					_, hb := minMaxUsers(tree, rows, y)
					if lowA < hb {
						t.Fatalf("%s (LF %v, lowest user factor %v) ranks below sibling %s (LF %v, best user factor %v)",
							a.assoc.Key, ra.LevelFS, lowA, b.assoc.Key, rb.LevelFS, hb)
					}
				}
			}
		}
	})
}

// minMaxUsers returns the lowest and highest factor of the users at or below node i
// (1 and 0 when there are none, so the comparison is vacuous).
func minMaxUsers(tree *AccountTree, rows []ShareRow, i int) (lo, hi float64) {
	lo, hi = 1, 0
	var visit func(int)
	visit = func(j int) {
		if tree.nodes[j].assoc.User {
			lo, hi = min(lo, rows[j].FairShare), max(hi, rows[j].FairShare)
		}
		for _, c := range tree.nodes[j].children {
			visit(c)
		}
	}
	visit(i)
	return lo, hi
}

func TestClassicProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tree, usage := genTree(t)
		for _, r := range FairShares(tree, usage, AlgoClassic) {
			if r.FairShare < 0 || r.FairShare > 1 {
				t.Fatalf("%s classic factor %v outside [0,1]", r.Key, r.FairShare)
			}
		}
	})
}

func TestJobPriorityNeverNegative(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := PriorityConfig{Weights: Weights{
			Age: rapid.Float64Range(0, 1e6).Draw(t, "wAge"), QOS: rapid.Float64Range(0, 1e6).Draw(t, "wQOS"),
			TRES: map[string]float64{"cpu": rapid.Float64Range(-1e6, 1e6).Draw(t, "wCPU")},
		}}
		in := JobFactorsInput{
			Eligible:  t0.Add(-time.Duration(rapid.Int64Range(-1e15, 1e15).Draw(t, "age"))),
			QOSFactor: rapid.Float64Range(-2, 2).Draw(t, "qos"),
			TRES:      map[string]float64{"cpu": rapid.Float64Range(0, 1000).Draw(t, "cpu")},
			Nice:      rapid.IntRange(-20000, 20000).Draw(t, "nice"),
		}
		b := JobPriority(cfg, in, rapid.Float64Range(-1, 2).Draw(t, "fs"), ClusterTotals{TRES: map[string]float64{"cpu": 512}}, t0)
		for name, f := range map[string]float64{"age": b.Age, "qos": b.QOS, "fs": b.FairShare, "cpu": b.TRES["cpu"]} {
			if f < 0 || f > 1 {
				t.Fatalf("factor %s = %v outside [0,1]", name, f)
			}
		}
		if b.Total < 0 {
			t.Fatalf("total %v is negative", b.Total)
		}
	})
}
