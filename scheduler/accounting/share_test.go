package accounting

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
)

const accountsYAML = `
algorithm: fairtree
half_life: 2-0
reset: weekly
accounts:
  - name: Physics
    shares: 40
    users:
      - name: alice
      - name: bob
        shares: parent
  - name: chem
    shares: 60
    users:
      - {name: carol, shares: 1}
  - name: hep
    parent: physics
    shares: 0
`

func TestParseAccounts(t *testing.T) {
	setup, err := ParseAccounts([]byte(accountsYAML))
	if err != nil {
		t.Fatal(err)
	}
	if setup.Algorithm != policy.AlgoFairTree || setup.Decay.HalfLife != 48*time.Hour || setup.Decay.Reset != ResetWeekly {
		t.Errorf("setup = %+v", setup)
	}
	want := []policy.Association{
		{Key: "physics", Shares: 40},
		{Key: "physics/alice", Parent: "physics", User: true},
		{Key: "physics/bob", Parent: "physics", User: true, SharesParent: true},
		{Key: "chem", Shares: 60},
		{Key: "chem/carol", Parent: "chem", User: true, Shares: 1},
		{Key: "hep", Parent: "physics", ZeroShares: true},
	}
	if len(setup.Associations) != len(want) {
		t.Fatalf("associations = %+v", setup.Associations)
	}
	for i := range want {
		if setup.Associations[i] != want[i] {
			t.Errorf("association %d = %+v, want %+v", i, setup.Associations[i], want[i])
		}
	}
	if _, err := policy.NewAccountTree(setup.Associations); err != nil {
		t.Errorf("tree: %v", err)
	}
}

func TestParseAccountsErrors(t *testing.T) {
	tests := []struct{ yaml, mention string }{
		{"accounts:\n  - name: a\n    sharez: 3\n", "sharez"},
		{"accounts:\n  - name: a\n    shares: lots\n", `"lots"`},
		{"accounts:\n  - name: a\n    shares: parent\n", `"parent"`},
		{"accounts:\n  - name: a\n    users: [{name: ''}]\n", "user name"},
		{"accounts:\n  - name: a/b\n", `"a/b"`},
		{"half_life: soon\n", `"soon"`},
		{"reset: hourly\n", `"hourly"`},
		{"algorithm: random\n", `"random"`},
	}
	for _, tc := range tests {
		_, err := ParseAccounts([]byte(tc.yaml))
		if !errors.Is(err, ErrBadAccounts) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("ParseAccounts(%q) err = %v, want ErrBadAccounts mentioning %s", tc.yaml, err, tc.mention)
		}
	}
}

func shareFixture(t *testing.T) (*policy.AccountTree, []policy.ShareRow) {
	t.Helper()
	setup, err := ParseAccounts([]byte(accountsYAML))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := policy.NewAccountTree(setup.Associations)
	if err != nil {
		t.Fatal(err)
	}
	return tree, policy.FairShares(tree, map[string]float64{"physics/alice": 300, "chem/carol": 100}, setup.Algorithm)
}

// Hand-computed under Fair Tree: chem's LevelFS (0.6/0.25 = 2.4) beats
// physics' (0.4/0.75), so carol ranks first (3/3); in physics bob
// (fairshare=parent, LevelFS ∞) beats alice: 2/3 and 1/3. bob shows his
// account's NormShares, the standing fairshare=parent competes with.
func TestRenderSharesParsable(t *testing.T) {
	tree, rows := shareFixture(t)
	var buf bytes.Buffer
	if err := RenderShares(&buf, tree, rows, policy.AlgoFairTree, ShareOptions{Parsable: true}); err != nil {
		t.Fatal(err)
	}
	want := `Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare
root|||1.000000|400|1.000000|
chem||60|0.600000|100|0.250000|
chem|carol|1|1.000000|100|1.000000|1.000000
physics||40|0.400000|300|0.750000|
physics|alice|1|1.000000|300|1.000000|0.333333
physics|bob|parent|0.400000|0|0.000000|0.666667
hep||0|0.000000|0|0.000000|
`
	if buf.String() != want {
		t.Errorf("sshare -P:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestRenderSharesLongAndFilters(t *testing.T) {
	tree, rows := shareFixture(t)
	var buf bytes.Buffer
	if err := RenderShares(&buf, tree, rows, policy.AlgoFairTree, ShareOptions{Long: true, Accounts: []string{"physics"}, Users: []string{"alice"}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "Account User RawShares NormShares RawUsage EffectvUsage FairShare NormUsage LevelFS" {
		t.Errorf("header = %q", lines[0])
	}
	// root, physics, alice (bob filtered out by -u), hep (under physics).
	if len(lines) != 6 {
		t.Fatalf("got %d lines:\n%s", len(lines), buf.String())
	}
	if !strings.HasPrefix(lines[3], "physics ") || !strings.HasPrefix(lines[4], "  physics ") || !strings.HasPrefix(lines[5], " hep ") {
		t.Errorf("indentation:\n%s", buf.String())
	}
	if f := strings.Fields(lines[4]); f[len(f)-1] != "1.000000" || f[len(f)-2] != "0.750000" {
		t.Errorf("alice's NormUsage/LevelFS = %v", f)
	}
	if f := strings.Fields(lines[3]); f[len(f)-1] != "0.533333" {
		t.Errorf("physics LevelFS = %v, want 0.4/0.75", f)
	}
	buf.Reset()
	if err := WriteSharesJSON(&buf, rows, testNow); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Shares struct {
			Shares []struct {
				Account, User string
				RawShares     any     `json:"raw_shares"`
				LevelFS       any     `json:"level_fs"`
				FairShare     float64 `json:"fairshare"`
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	bob := doc.Shares.Shares[5]
	if bob.User != "bob" || bob.RawShares != "parent" || bob.LevelFS != "inf" {
		t.Errorf("bob in JSON = %+v", bob)
	}
}
