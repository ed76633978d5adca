package policy

import (
	"math"
	"strings"
	"testing"
)

// campus is a 3-level tree: two top-level accounts, one with a sub-account.
//
//	root
//	├─ chem            dave, erin
//	└─ physics         alice, bob
//	   └─ physics/theory   carol
func campus(t *testing.T, extra ...Association) *AccountTree {
	t.Helper()
	assocs := append([]Association{
		{Key: "physics"},
		{Key: "physics/alice", Parent: "physics", User: true},
		{Key: "physics/bob", Parent: "physics", User: true},
		{Key: "physics/theory", Parent: "physics"},
		{Key: "physics/theory/carol", Parent: "physics/theory", User: true},
		{Key: "chem"},
		{Key: "chem/dave", Parent: "chem", User: true},
		{Key: "chem/erin", Parent: "chem", User: true},
	}, extra...)
	tree, err := NewAccountTree(assocs)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func rowOf(t *testing.T, rows []ShareRow, key string) ShareRow {
	t.Helper()
	for _, r := range rows {
		if r.Key == key {
			return r
		}
	}
	t.Fatalf("no row %q", key)
	return ShareRow{}
}

func TestFairTreeHeavyUserInLightAccountBeatsLightUserInHeavyAccount(t *testing.T) {
	tree := campus(t)
	// physics used 10 (all alice), chem 90; alice is physics' heaviest user
	// yet dave, chem's lightest, still ranks below her.
	usage := map[string]float64{"physics/alice": 10, "chem/dave": 40, "chem/erin": 50}
	rows := FairShares(tree, usage, AlgoFairTree)
	// 5 users. physics LF = 0.5/0.1 = 5 beats chem 0.5/0.9. Inside physics:
	// bob (LF ∞, user) first; theory (LF ∞, account) ties him so carol shares
	// his rank; alice (LF (1/3)/1) next. chem: dave LF 0.5/(40/90)=1.125, erin 0.9.
	want := map[string]float64{
		"physics/bob": 5.0 / 5, "physics/theory/carol": 5.0 / 5, "physics/alice": 3.0 / 5,
		"chem/dave": 2.0 / 5, "chem/erin": 1.0 / 5,
	}
	for k, v := range want {
		if got := FactorOf(rows, k); !near(got, v) {
			t.Errorf("factor(%s) = %v, want %v", k, got, v)
		}
	}
	if FactorOf(rows, "physics/alice") <= FactorOf(rows, "chem/dave") {
		t.Fatal("a heavy user in a light account must beat a light user in a heavy account")
	}
}

func TestFairTreeTies(t *testing.T) {
	tests := []struct {
		name  string
		usage map[string]float64
		want  map[string]float64
	}{
		{
			name:  "no usage: all tied at the top",
			usage: nil,
			want:  map[string]float64{"physics/alice": 1, "physics/bob": 1, "physics/theory/carol": 1, "chem/dave": 1, "chem/erin": 1},
		},
		{
			// chem and physics both used half (LF 1): their children are
			// merged and ranked together. Levels: dave 0.5/0.2=2.5, alice and
			// bob (1/3)/(1/3)=1, theory (1/3)/(1/3)=1 (account), erin 0.5/0.8.
			name:  "tied accounts merge their children",
			usage: map[string]float64{"chem/dave": 2, "chem/erin": 8, "physics/alice": 10.0 / 3, "physics/bob": 10.0 / 3, "physics/theory/carol": 10.0 / 3},
			want:  map[string]float64{"chem/dave": 1, "physics/alice": 4.0 / 5, "physics/bob": 4.0 / 5, "physics/theory/carol": 4.0 / 5, "chem/erin": 1.0 / 5},
		},
		{
			name:  "equal sibling users share a rank",
			usage: map[string]float64{"chem/dave": 5, "chem/erin": 5, "physics/alice": 100, "physics/bob": 100, "physics/theory/carol": 100},
			// physics LF .5/(300/310) < chem .5/(10/310); inside physics all three LF 1.
			want: map[string]float64{"chem/dave": 1, "chem/erin": 1, "physics/alice": 3.0 / 5, "physics/bob": 3.0 / 5, "physics/theory/carol": 3.0 / 5},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows := FairShares(campus(t), tc.usage, AlgoFairTree)
			for k, v := range tc.want {
				if got := FactorOf(rows, k); !near(got, v) {
					t.Errorf("factor(%s) = %v, want %v", k, got, v)
				}
			}
		})
	}
}

func TestFairTreeZeroShares(t *testing.T) {
	tree := campus(t,
		Association{Key: "physics/zoe", Parent: "physics", User: true, ZeroShares: true},
		Association{Key: "guests", ZeroShares: true},
		Association{Key: "guests/gus", Parent: "guests", User: true},
	)
	// Nobody used anything: every user with shares has LF ∞, zoe (no shares)
	// LF 0 so she ranks after her siblings, and guests (no shares) after
	// every account with shares.
	rows := FairShares(tree, map[string]float64{}, AlgoFairTree)
	if r := rowOf(t, rows, "physics/zoe"); r.LevelFS != 0 || r.NormShares != 0 {
		t.Fatalf("zoe row = %+v, want LevelFS 0 NormShares 0", r)
	}
	n := 7.0
	want := map[string]float64{
		"chem/dave": 1, "chem/erin": 1, "physics/alice": 1, "physics/bob": 1, "physics/theory/carol": 1,
		"physics/zoe": 2 / n, "guests/gus": 1 / n,
	}
	for k, v := range want {
		if got := FactorOf(rows, k); !near(got, v) {
			t.Errorf("factor(%s) = %v, want %v", k, got, v)
		}
	}
}

func TestShareRows(t *testing.T) {
	tree := campus(t)
	usage := map[string]float64{"physics/alice": 30, "physics/theory/carol": 10, "chem/dave": 60, "ghost": 999, "chem/erin": -5}
	rows := FairShares(tree, usage, AlgoFairTree)
	keys := []string{"", "chem", "chem/dave", "chem/erin", "physics", "physics/alice", "physics/bob", "physics/theory", "physics/theory/carol"}
	depths := []int{0, 1, 2, 2, 1, 2, 2, 2, 3}
	if len(rows) != len(keys) {
		t.Fatalf("%d rows, want %d", len(rows), len(keys))
	}
	for i, r := range rows {
		if r.Key != keys[i] || r.Depth != depths[i] {
			t.Errorf("row %d = %q depth %d, want %q depth %d", i, r.Key, r.Depth, keys[i], depths[i])
		}
	}
	tests := []struct {
		key                                       string
		raw, norm, eff, normUsage, levelFS, share float64
	}{
		// RawUsage sums subtrees; unknown keys and negative usage are ignored.
		{"", 100, 1, 1, 1, 1, 0},
		{"physics", 40, 0.5, 0.4, 0.4, 0.5 / 0.4, 0},
		{"chem", 60, 0.5, 0.6, 0.6, 0.5 / 0.6, 0},
		{"physics/alice", 30, 1.0 / 3, 0.75, 0.3, (1.0 / 3) / 0.75, -1},
		{"physics/bob", 0, 1.0 / 3, 0, 0, math.Inf(1), -1},
		{"physics/theory", 10, 1.0 / 3, 0.25, 0.1, (1.0 / 3) / 0.25, 0},
		{"physics/theory/carol", 10, 1, 1, 0.1, 1, -1},
		{"chem/erin", 0, 0.5, 0, 0, math.Inf(1), -1},
	}
	for _, tc := range tests {
		r := rowOf(t, rows, tc.key)
		if !near(r.RawUsage, tc.raw) || !near(r.NormShares, tc.norm) || !near(r.EffectvUsage, tc.eff) || !near(r.NormUsage, tc.normUsage) {
			t.Errorf("%q: raw=%v norm=%v eff=%v normUsage=%v, want %v %v %v %v", tc.key, r.RawUsage, r.NormShares, r.EffectvUsage, r.NormUsage, tc.raw, tc.norm, tc.eff, tc.normUsage)
		}
		if r.LevelFS != tc.levelFS && !near(r.LevelFS, tc.levelFS) {
			t.Errorf("%q: LevelFS=%v, want %v", tc.key, r.LevelFS, tc.levelFS)
		}
		if tc.share >= 0 && r.FairShare != tc.share {
			t.Errorf("%q: accounts carry no Fair Tree factor, got %v", tc.key, r.FairShare)
		}
		if r.RawShares != 1 {
			t.Errorf("%q: RawShares=%v, want the default 1", tc.key, r.RawShares)
		}
	}
	if FactorOf(rows, "nobody") != 0 {
		t.Fatal("unknown key must have factor 0")
	}
	if m := FactorMap(rows); m["physics/bob"] != FactorOf(rows, "physics/bob") {
		t.Fatal("FactorMap disagrees with FactorOf")
	}
}

func TestClassicFactor(t *testing.T) {
	tests := []struct{ u, s, want float64 }{
		{0.5, 0.5, 0.5},             // on target
		{0, 0.3, 1},                 // unused
		{1, 0.5, 0.25},              // twice the share
		{0.25, 0.5, math.Sqrt2 / 2}, // half the share
		{0.2, 0, 0},                 // no shares
	}
	for _, tc := range tests {
		if got := ClassicFactor(tc.u, tc.s); !near(got, tc.want) {
			t.Errorf("ClassicFactor(%v, %v) = %v, want %v", tc.u, tc.s, got, tc.want)
		}
	}
}

func TestClassicFairShares(t *testing.T) {
	tree, err := NewAccountTree([]Association{
		{Key: "A", Shares: 40},
		{Key: "A/a1", Parent: "A", User: true, Shares: 30},
		{Key: "A/a2", Parent: "A", User: true, Shares: 10},
		{Key: "C", Shares: 60},
		{Key: "C/c1", Parent: "C", User: true},
		{Key: "C/c0", Parent: "C", User: true, ZeroShares: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := FairShares(tree, map[string]float64{"A/a1": 30, "A/a2": 10, "C/c1": 60}, AlgoClassic)
	// Global shares: A .4, a1 .4×.75=.3, a2 .4×.25=.1, C .6, c1 .6.
	// Effective usage: top tier U; below UE = U + (UE_parent − U)·S_local.
	tests := []struct {
		key       string
		norm, eff float64
	}{
		{"A", 0.4, 0.4},
		{"A/a1", 0.3, 0.3 + (0.4-0.3)*0.75},
		{"A/a2", 0.1, 0.1 + (0.4-0.1)*0.25},
		{"C", 0.6, 0.6},
		{"C/c1", 0.6, 0.6},
		{"C/c0", 0, 0 + 0.6*0},
	}
	for _, tc := range tests {
		r := rowOf(t, rows, tc.key)
		want := 0.0
		if tc.norm > 0 {
			want = math.Exp2(-tc.eff / tc.norm)
		}
		if !near(r.NormShares, tc.norm) || !near(r.EffectvUsage, tc.eff) || !near(r.FairShare, want) {
			t.Errorf("%s: norm=%v eff=%v fs=%v, want %v %v %v", tc.key, r.NormShares, r.EffectvUsage, r.FairShare, tc.norm, tc.eff, want)
		}
	}
	// Nobody used anything: every association with shares is at 1.
	for _, r := range FairShares(tree, nil, AlgoClassic)[1:] {
		want := 1.0
		if r.Key == "C/c0" {
			want = 0
		}
		if r.FairShare != want {
			t.Errorf("idle cluster: %s factor %v, want %v", r.Key, r.FairShare, want)
		}
	}
}

func TestSharesParent(t *testing.T) {
	tree := campus(t, Association{Key: "chem/pi", Parent: "chem", User: true, SharesParent: true})
	usage := map[string]float64{"chem/pi": 50, "chem/dave": 10, "chem/erin": 20, "physics/alice": 20}
	rows := FairShares(tree, usage, AlgoFairTree)
	pi := rowOf(t, rows, "chem/pi")
	if !pi.SharesParent || pi.RawShares != 0 || !math.IsInf(pi.LevelFS, 1) {
		t.Fatalf("fairshare=parent row = %+v, want SharesParent, RawShares 0, LevelFS +Inf", pi)
	}
	// dave and erin split chem's shares between themselves (0.5 each), and pi,
	// despite the heaviest usage, ranks first inside chem.
	if d := rowOf(t, rows, "chem/dave"); !near(d.NormShares, 0.5) {
		t.Fatalf("dave NormShares = %v, want 0.5 (pi holds no shares of its own)", d.NormShares)
	}
	if FactorOf(rows, "chem/pi") <= FactorOf(rows, "chem/dave") {
		t.Fatalf("pi %v should outrank dave %v", FactorOf(rows, "chem/pi"), FactorOf(rows, "chem/dave"))
	}
	classic := FairShares(tree, usage, AlgoClassic)
	if got, want := FactorOf(classic, "chem/pi"), FactorOf(classic, "chem"); got != want || want == 0 {
		t.Fatalf("classic: pi factor %v, want chem's %v", got, want)
	}
	if _, err := NewAccountTree([]Association{{Key: "x", SharesParent: true}}); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("fairshare=parent on an account: err = %v, want one naming \"x\"", err)
	}
}
