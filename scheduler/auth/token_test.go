package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func testKey(t *testing.T) Key {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSignVerify(t *testing.T) {
	key, other := testKey(t), testKey(t)
	good, err := Sign(key, Claims{User: "alice", Role: RoleUser, IssuedAt: t0, Expires: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	forever, err := Sign(key, Claims{User: "n1", Role: RoleAgent, Node: "gpu001", IssuedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	// Flip the role inside the payload but keep the old signature.
	payload, sig, _ := strings.Cut(strings.TrimPrefix(good, tokenPrefix), ".")
	tampered := tokenPrefix + strings.Replace(payload, "In", "In", 1) + "x." + sig
	tests := []struct {
		name    string
		key     Key
		token   string
		now     time.Time
		want    Claims
		wantErr error
	}{
		{"valid", key, good, t0.Add(time.Minute), Claims{User: "alice", Role: RoleUser, IssuedAt: t0, Expires: t0.Add(time.Hour)}, nil},
		{"agent without expiry", key, forever, t0.Add(1000 * time.Hour), Claims{User: "n1", Role: RoleAgent, Node: "gpu001", IssuedAt: t0}, nil},
		{"expired at the instant", key, good, t0.Add(time.Hour), Claims{}, ErrExpired},
		{"other cluster's key", other, good, t0, Claims{}, ErrBadSignature},
		{"tampered payload", key, tampered, t0, Claims{}, ErrBadSignature},
		{"garbage", key, "hello", t0, Claims{}, ErrMalformed},
		{"empty", key, "", t0, Claims{}, ErrMalformed},
		{"bad base64 sig", key, tokenPrefix + "abc.!!", t0, Claims{}, ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Verify(tc.key, tc.token, tc.now)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil && (got.User != tc.want.User || got.Role != tc.want.Role || got.Node != tc.want.Node ||
				!got.IssuedAt.Equal(tc.want.IssuedAt) || !got.Expires.Equal(tc.want.Expires)) {
				t.Fatalf("claims = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSignRefuses(t *testing.T) {
	key := testKey(t)
	for _, c := range []Claims{{Role: RoleUser}, {User: "a", Role: "root"}, {User: "a", Role: RoleAgent}} {
		if _, err := Sign(key, c); err == nil {
			t.Errorf("Sign(%+v) succeeded", c)
		}
	}
	if _, err := Sign(nil, Claims{User: "a", Role: RoleUser}); !errors.Is(err, ErrKey) {
		t.Errorf("nil key: %v", err)
	}
}

func TestRoleOrder(t *testing.T) {
	tests := []struct {
		r, o Role
		want bool
	}{
		{RoleAdmin, RoleOperator, true}, {RoleOperator, RoleAdmin, false}, {RoleUser, RoleUser, true},
		{RoleAgent, RoleUser, false}, {RoleAdmin, RoleAgent, false}, {RoleAgent, RoleAgent, true},
	}
	for _, tc := range tests {
		if got := tc.r.AtLeast(tc.o); got != tc.want {
			t.Errorf("%s.AtLeast(%s) = %v", tc.r, tc.o, got)
		}
	}
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "cluster.key")
	k1, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", st.Mode().Perm())
	}
	k2, err := LoadOrCreateKey(path)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("second load gave a different key (%v)", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(path); !errors.Is(err, ErrKey) {
		t.Fatalf("world-readable key accepted: %v", err)
	}
	bad := filepath.Join(dir, "bad.key")
	if err := os.WriteFile(bad, []byte("not hex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(bad); !errors.Is(err, ErrKey) {
		t.Fatalf("garbage key accepted: %v", err)
	}
}
