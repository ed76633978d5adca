package policy

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestNewAccountTreeErrors(t *testing.T) {
	tests := []struct {
		name   string
		assocs []Association
		want   error
		names  string
	}{
		{"unknown parent", []Association{{Key: "physics"}, {Key: "bio/x", Parent: "bio", User: true}}, ErrUnknownParent, `"bio/x": parent "bio"`},
		{"duplicate", []Association{{Key: "physics"}, {Key: "physics"}}, ErrDuplicateKey, `"physics"`},
		{"negative shares", []Association{{Key: "physics", Shares: -1}}, ErrBadShares, `"physics": shares=-1`},
		{"empty key", []Association{{Key: "", Parent: "physics"}}, ErrEmptyKey, `"physics"`},
		{"user with children", []Association{{Key: "a"}, {Key: "a/u", Parent: "a", User: true}, {Key: "a/u/x", Parent: "a/u"}}, ErrUserParent, `"a/u/x": parent "a/u"`},
		{"self parent", []Association{{Key: "a", Parent: "a"}}, ErrCycle, `"a"`},
		{"two-node cycle", []Association{{Key: "ok"}, {Key: "b", Parent: "c"}, {Key: "c", Parent: "b"}, {Key: "a", Parent: "b"}}, ErrCycle, `"b"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := NewAccountTree(tc.assocs)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.names) {
				t.Fatalf("NewAccountTree = %v, %v; want %v naming %s", tree, err, tc.want, tc.names)
			}
		})
	}
}

func TestAccountTreeOrder(t *testing.T) {
	tree, err := NewAccountTree([]Association{
		{Key: "physics/theory", Parent: "physics"},
		{Key: "chem"},
		{Key: "physics"},
		{Key: "physics/theory/zed", Parent: "physics/theory", User: true},
		{Key: "physics/bob", Parent: "physics", User: true},
		{Key: "physics/alice", Parent: "physics", User: true},
		{Key: "chem/dave", Parent: "chem", User: true, Shares: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	// sshare order: depth-first, users before sub-accounts, then by name.
	want := []string{"chem", "chem/dave", "physics", "physics/alice", "physics/bob", "physics/theory", "physics/theory/zed"}
	if got := tree.Keys(); !slices.Equal(got, want) {
		t.Fatalf("Keys = %v, want %v", got, want)
	}
	if tree.Len() != 7 || tree.Users() != 4 {
		t.Fatalf("Len=%d Users=%d, want 7 and 4", tree.Len(), tree.Users())
	}
	if a, ok := tree.Lookup("chem/dave"); !ok || a.Shares != 3 || !a.User {
		t.Fatalf("Lookup(chem/dave) = %+v, %v", a, ok)
	}
	if _, ok := tree.Lookup(""); ok {
		t.Fatal("the implicit root must not be looked up as an association")
	}
}
