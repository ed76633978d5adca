package accounting

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/parityhpc/parity/scheduler/policy"
)

// ErrBadAccounts is wrapped by account-file errors.
var ErrBadAccounts = errors.New("accounting: invalid account file")

// AccountsFile is the YAML account tree `parity share` reads:
//
//	algorithm: fairtree        # or classic (PriorityFlags=NO_FAIR_TREE)
//	half_life: 7-0             # PriorityDecayHalfLife; 0 = no decay
//	reset: none                # PriorityUsageResetPeriod
//	accounts:
//	  - name: physics
//	    shares: 40
//	  - name: hep
//	    parent: physics
//	    users:
//	      - {name: alice, shares: 2}
//	      - {name: bob, shares: parent}
type AccountsFile struct {
	Algorithm string        `yaml:"algorithm"`
	HalfLife  string        `yaml:"half_life"`
	Reset     string        `yaml:"reset"`
	Accounts  []accountSpec `yaml:"accounts"`
}

type accountSpec struct {
	Name   string     `yaml:"name"`
	Parent string     `yaml:"parent"`
	Shares string     `yaml:"shares"`
	Users  []userSpec `yaml:"users"`
}

type userSpec struct {
	Name   string `yaml:"name"`
	Shares string `yaml:"shares"`
}

// ShareSetup is a parsed account file: the associations for
// policy.NewAccountTree, the fair-share algorithm and the decay settings.
type ShareSetup struct {
	Associations []policy.Association
	Algorithm    string
	Decay        DecayConfig
}

// ParseAccounts reads an account file (strict: unknown keys are errors).
// Account names are keys; a user's key is UsageKey(account, user).
func ParseAccounts(data []byte) (ShareSetup, error) {
	var f AccountsFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return ShareSetup{}, fmt.Errorf("%w: %w", ErrBadAccounts, err)
	}
	setup := ShareSetup{Algorithm: policy.AlgoFairTree, Decay: DecayConfig{HalfLife: policy.DefaultHalfLife}}
	switch a := strings.ToLower(f.Algorithm); a {
	case "", policy.AlgoFairTree:
	case policy.AlgoClassic:
		setup.Algorithm = a
	default:
		return setup, fmt.Errorf("%w: algorithm %q (want %s or %s)", ErrBadAccounts, f.Algorithm, policy.AlgoFairTree, policy.AlgoClassic)
	}
	if f.HalfLife != "" {
		hl, err := ParseDuration(f.HalfLife)
		if err != nil {
			return setup, fmt.Errorf("%w: half_life: %w", ErrBadAccounts, err)
		}
		setup.Decay.HalfLife = hl
	}
	reset, err := ParseResetPeriod(f.Reset)
	if err != nil {
		return setup, fmt.Errorf("%w: reset: %w", ErrBadAccounts, err)
	}
	setup.Decay.Reset = reset
	for _, a := range f.Accounts {
		name := strings.ToLower(strings.TrimSpace(a.Name))
		if name == "" || strings.Contains(name, "/") {
			return setup, fmt.Errorf("%w: account name %q must be non-empty and without '/'", ErrBadAccounts, a.Name)
		}
		as := policy.Association{Key: name, Parent: strings.ToLower(strings.TrimSpace(a.Parent))}
		if err := applyShares(&as, a.Shares, false); err != nil {
			return setup, fmt.Errorf("%w: account %q: %w", ErrBadAccounts, name, err)
		}
		setup.Associations = append(setup.Associations, as)
		for _, u := range a.Users {
			user := strings.ToLower(strings.TrimSpace(u.Name))
			if user == "" || strings.Contains(user, "/") {
				return setup, fmt.Errorf("%w: account %q: user name %q must be non-empty and without '/'", ErrBadAccounts, name, u.Name)
			}
			us := policy.Association{Key: UsageKey(name, user), Parent: name, User: true}
			if err := applyShares(&us, u.Shares, true); err != nil {
				return setup, fmt.Errorf("%w: user %q: %w", ErrBadAccounts, us.Key, err)
			}
			setup.Associations = append(setup.Associations, us)
		}
	}
	return setup, nil
}

// applyShares reads fairshare=: a number (0 is no shares), "parent" on
// users, or nothing for the default of 1.
func applyShares(a *policy.Association, s string, user bool) error {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case s == "":
		return nil
	case s == "parent" && user:
		a.SharesParent = true
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		want := "a non-negative number"
		if user {
			want += " or parent"
		}
		return fmt.Errorf("shares %q is not %s", s, want)
	}
	a.Shares, a.ZeroShares = v, v == 0
	return nil
}

// ShareOptions shapes sshare output.
type ShareOptions struct {
	Long      bool     // -l: adds NormUsage and LevelFS
	Users     []string // -u: user rows only for these users (accounts kept)
	Accounts  []string // -A: only these accounts and what is below them
	Parsable  bool     // -P
	Trailing  bool     // -p
	NoHeader  bool
	Delimiter string
}

// rowAccount and rowUser split a share row's key into sshare's columns.
func rowAccount(r policy.ShareRow) string {
	if r.Key == "" {
		return "root"
	}
	if r.User {
		a, _, _ := strings.Cut(r.Key, "/")
		return a
	}
	return r.Key
}

func rowUser(r policy.ShareRow) string {
	if !r.User {
		return ""
	}
	_, u, _ := strings.Cut(r.Key, "/")
	return u
}

// selectShares applies -A and -u, keeping tree order.
func selectShares(tree *policy.AccountTree, rows []policy.ShareRow, o ShareOptions) []policy.ShareRow {
	under := func(key string) bool {
		if len(o.Accounts) == 0 {
			return true
		}
		for a := range ancestors(tree, key) {
			if in(o.Accounts, a) {
				return true
			}
		}
		return false
	}
	var out []policy.ShareRow
	for _, r := range rows {
		if r.Key != "" && !under(r.Key) {
			continue
		}
		if r.User && !in(o.Users, rowUser(r)) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// ancestors yields key and every account above it.
func ancestors(tree *policy.AccountTree, key string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for key != "" {
			a, ok := tree.Lookup(key)
			if !ok {
				return
			}
			name := key
			if a.User {
				name = a.Parent
			}
			if !yield(name) {
				return
			}
			key = a.Parent
		}
	}
}

func fmtShare(v float64) string {
	if math.IsInf(v, 1) {
		return "inf"
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

// RenderShares writes sshare's table: Account (indented by depth), User,
// RawShares, NormShares, RawUsage, EffectvUsage, FairShare, and with Long
// also NormUsage and LevelFS. Under Fair Tree accounts have no FairShare.
func RenderShares(w io.Writer, tree *policy.AccountTree, rows []policy.ShareRow, algo string, o ShareOptions) error {
	cols := []Column{
		{Field{Name: "Account"}, -20}, {Field{Name: "User"}, 10}, {Field{Name: "RawShares"}, 10},
		{Field{Name: "NormShares"}, 11}, {Field{Name: "RawUsage"}, 11}, {Field{Name: "EffectvUsage"}, 13},
		{Field{Name: "FairShare"}, 10},
	}
	if o.Long {
		cols = append(cols, Column{Field{Name: "NormUsage"}, 11}, Column{Field{Name: "LevelFS"}, 10})
	}
	var lines [][]string
	for _, r := range selectShares(tree, rows, o) {
		acct := rowAccount(r)
		if !o.Parsable {
			acct = strings.Repeat(" ", max(r.Depth-1, 0)) + acct
			if r.User {
				acct = " " + acct
			}
		}
		raw := strconv.FormatFloat(r.RawShares, 'f', -1, 64)
		switch {
		case r.Key == "":
			raw = ""
		case r.SharesParent:
			raw = "parent"
		}
		fs := fmtShare(r.FairShare)
		if algo != policy.AlgoClassic && !r.User {
			fs = ""
		}
		line := []string{acct, rowUser(r), raw, fmtShare(r.NormShares), strconv.FormatFloat(math.Floor(r.RawUsage), 'f', 0, 64),
			fmtShare(r.EffectvUsage), fs}
		if o.Long {
			line = append(line, fmtShare(r.NormUsage), fmtShare(r.LevelFS))
		}
		lines = append(lines, line)
	}
	return writeCells(w, cols, lines, TableOptions{Parsable: o.Parsable, Trailing: o.Trailing, Delimiter: o.Delimiter, NoHeader: o.NoHeader})
}

// WriteSharesJSON writes sshare --json: {"shares": {"shares": [...]}, …}.
func WriteSharesJSON(w io.Writer, rows []policy.ShareRow, now time.Time) error {
	type share struct {
		Account      string  `json:"account"`
		User         string  `json:"user,omitempty"`
		Depth        int     `json:"depth"`
		RawShares    any     `json:"raw_shares"`
		NormShares   float64 `json:"norm_shares"`
		RawUsage     float64 `json:"raw_usage"`
		NormUsage    float64 `json:"norm_usage"`
		EffectvUsage float64 `json:"effective_usage"`
		FairShare    float64 `json:"fairshare"`
		LevelFS      any     `json:"level_fs"`
	}
	out := make([]share, 0, len(rows))
	for _, r := range rows {
		s := share{Account: rowAccount(r), User: rowUser(r), Depth: r.Depth, RawShares: r.RawShares, NormShares: r.NormShares,
			RawUsage: r.RawUsage, NormUsage: r.NormUsage, EffectvUsage: r.EffectvUsage, FairShare: r.FairShare, LevelFS: r.LevelFS}
		if r.SharesParent {
			s.RawShares = "parent"
		}
		if math.IsInf(r.LevelFS, 1) {
			s.LevelFS = "inf"
		}
		out = append(out, s)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{
		"shares":   map[string]any{"shares": out, "time": now.Unix()},
		"meta":     map[string]any{"plugin": map[string]string{"name": "parity"}},
		"errors":   []any{},
		"warnings": []any{},
	})
}
