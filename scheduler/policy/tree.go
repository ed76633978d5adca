package policy

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Errors NewAccountTree wraps; the message names the offending key.
var (
	ErrEmptyKey      = errors.New("policy: empty association key")
	ErrDuplicateKey  = errors.New("policy: duplicate association")
	ErrUnknownParent = errors.New("policy: unknown parent association")
	ErrUserParent    = errors.New("policy: a user association cannot have children")
	ErrBadShares     = errors.New("policy: invalid shares")
	ErrCycle         = errors.New("policy: association cycle")
)

// Association is one node of the account tree: an account or a user under one.
type Association struct {
	Key    string  // "physics" for an account, "physics/alice" for a user under it; root is implicit ("")
	Parent string  // "" for top-level accounts
	Shares float64 // RawShares (fairshare=); 0 means the default, 1 (see ZeroShares)
	User   bool
	// ZeroShares gives the association no shares at all (fairshare=0), which
	// a zero Shares cannot say because zero means the default.
	ZeroShares bool
	// SharesParent is fairshare=parent on a user: it competes with its
	// parent account's standing rather than its own. Under Fair Tree it
	// ranks first among its siblings (LevelFS +Inf, subject to ties); under
	// classic it takes its account's factor. Only users may set it.
	SharesParent bool
}

// rawShares is the shares the algorithms use.
func (a Association) rawShares() float64 {
	switch {
	case a.ZeroShares, a.SharesParent:
		return 0
	case a.Shares == 0:
		return 1
	}
	return a.Shares
}

// AccountTree is an immutable, validated association hierarchy under an
// implicit root. It is safe for concurrent reads.
type AccountTree struct {
	nodes []treeNode // tree order (sshare's): index 0 is the root
	index map[string]int
	users int
}

type treeNode struct {
	assoc    Association
	shares   float64
	parent   int // -1 for the root
	depth    int // root 0, top-level accounts 1
	children []int
}

// NewAccountTree validates assocs and builds the tree. Children are ordered
// as sshare prints them: users before sub-accounts, each by key.
func NewAccountTree(assocs []Association) (*AccountTree, error) {
	byKey := make(map[string]Association, len(assocs))
	for _, a := range assocs {
		if a.Key == "" {
			return nil, fmt.Errorf("%w (parent %q)", ErrEmptyKey, a.Parent)
		}
		if _, dup := byKey[a.Key]; dup {
			return nil, fmt.Errorf("%w: %q", ErrDuplicateKey, a.Key)
		}
		if math.IsNaN(a.Shares) || math.IsInf(a.Shares, 0) || a.Shares < 0 {
			return nil, fmt.Errorf("%w: association %q: shares=%v must be a finite non-negative number", ErrBadShares, a.Key, a.Shares)
		}
		if a.SharesParent && !a.User {
			return nil, fmt.Errorf("%w: association %q: fairshare=parent is supported on users only", ErrBadShares, a.Key)
		}
		byKey[a.Key] = a
	}
	kids := make(map[string][]Association, len(assocs))
	for _, k := range sortedKeys(byKey) {
		a := byKey[k]
		if a.Parent != "" {
			p, ok := byKey[a.Parent]
			if !ok {
				return nil, fmt.Errorf("%w: association %q: parent %q", ErrUnknownParent, a.Key, a.Parent)
			}
			if p.User {
				return nil, fmt.Errorf("%w: association %q: parent %q is a user", ErrUserParent, a.Key, a.Parent)
			}
		}
		kids[a.Parent] = append(kids[a.Parent], a)
	}
	t := &AccountTree{index: make(map[string]int, len(assocs)+1)}
	t.add(Association{}, -1, 0, kids)
	if len(t.nodes) != len(assocs)+1 {
		// Every parent exists, so whatever the walk from the root missed hangs
		// off a cycle: climb from the smallest missed key until a key repeats.
		for _, k := range sortedKeys(byKey) {
			if _, seen := t.index[k]; !seen {
				return nil, fmt.Errorf("%w: association %q is its own ancestor", ErrCycle, cycleMember(byKey, k))
			}
		}
	}
	return t, nil
}

// cycleMember climbs parents from key until one repeats and returns it.
func cycleMember(byKey map[string]Association, key string) string {
	seen := map[string]bool{}
	for !seen[key] {
		seen[key] = true
		key = byKey[key].Parent
	}
	return key
}

// add appends a and its subtree in pre-order.
func (t *AccountTree) add(a Association, parent, depth int, kids map[string][]Association) {
	i := len(t.nodes)
	t.nodes = append(t.nodes, treeNode{assoc: a, shares: a.rawShares(), parent: parent, depth: depth})
	t.index[a.Key] = i
	if a.User {
		t.users++
	}
	if parent >= 0 {
		t.nodes[parent].children = append(t.nodes[parent].children, i)
	}
	if a.User {
		return
	}
	cs := kids[a.Key]
	sort.SliceStable(cs, func(x, y int) bool {
		if cs[x].User != cs[y].User {
			return cs[x].User
		}
		return cs[x].Key < cs[y].Key
	})
	for _, c := range cs {
		t.add(c, i, depth+1, kids)
	}
}

// Len is the number of associations, root excluded.
func (t *AccountTree) Len() int { return len(t.nodes) - 1 }

// Users is the number of user associations (Fair Tree's rank denominator).
func (t *AccountTree) Users() int { return t.users }

// Keys returns every association key in tree order, root excluded.
func (t *AccountTree) Keys() []string {
	keys := make([]string, 0, t.Len())
	for _, n := range t.nodes[1:] {
		keys = append(keys, n.assoc.Key)
	}
	return keys
}

// Lookup returns the association registered under key.
func (t *AccountTree) Lookup(key string) (Association, bool) {
	i, ok := t.index[key]
	if !ok || i == 0 {
		return Association{}, false
	}
	return t.nodes[i].assoc, true
}
