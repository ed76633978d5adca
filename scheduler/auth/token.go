package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Role is what a caller may do. Roles are ordered for users (user <
// operator < admin); agent is separate: a node daemon, bound to its node.
type Role string

// Roles.
const (
	RoleUser     Role = "user"
	RoleOperator Role = "operator"
	RoleAdmin    Role = "admin"
	RoleAgent    Role = "agent"
)

// ParseRole checks a role name.
func ParseRole(s string) (Role, error) {
	switch r := Role(strings.ToLower(s)); r {
	case RoleUser, RoleOperator, RoleAdmin, RoleAgent:
		return r, nil
	}
	return "", fmt.Errorf("auth: role %q must be user, operator, admin or agent", s)
}

func (r Role) rank() int {
	switch r {
	case RoleOperator:
		return 1
	case RoleAdmin:
		return 2
	}
	return 0
}

// AtLeast reports whether r grants what o grants (agents grant only agent).
func (r Role) AtLeast(o Role) bool {
	if r == RoleAgent || o == RoleAgent {
		return r == o
	}
	return r.rank() >= o.rank()
}

// Claims is what a token asserts.
type Claims struct {
	User     string    `json:"u"`
	Role     Role      `json:"r"`
	Node     string    `json:"n,omitempty"` // agents: the node the credential is bound to
	IssuedAt time.Time `json:"iat"`
	Expires  time.Time `json:"exp,omitzero"` // zero = never
}

// Token errors.
var (
	ErrMalformed    = errors.New("auth: malformed token")
	ErrBadSignature = errors.New("auth: token signature does not match the cluster key")
	ErrExpired      = errors.New("auth: token expired")
	ErrKey          = errors.New("auth: bad cluster key")
)

const tokenPrefix = "pt1."

// KeySize is the length of a cluster key in bytes.
const KeySize = 32

// Key is the cluster's token signing key.
type Key []byte

// GenerateKey returns a fresh random key.
func GenerateKey() (Key, error) {
	k := make(Key, KeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("auth: generate key: %w", err)
	}
	return k, nil
}

// LoadKey reads a key file (hex). It refuses a file others may read, since
// anyone holding the key can mint admin tokens.
func LoadKey(path string) (Key, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth: key file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: key file %s has mode %v; it must be readable by its owner only (chmod 600)", ErrKey, path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: key file: %w", err)
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(k) < 16 {
		return nil, fmt.Errorf("%w: key file %s must hold at least 16 hex-encoded bytes", ErrKey, path)
	}
	return k, nil
}

// LoadOrCreateKey reads the key file, creating it (mode 0600, and its
// directory 0700) with a fresh key when it does not exist.
func LoadOrCreateKey(path string) (Key, error) {
	k, err := LoadKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("auth: key dir: %w", err)
	}
	k, err = GenerateKey()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadKey(path) // another process won the race
	}
	if err != nil {
		return nil, fmt.Errorf("auth: create key: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(k) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("auth: write key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("auth: sync key: %w", err)
	}
	return k, f.Close()
}

// Sign makes a token for the claims. Agents must name their node; users
// must name themselves.
func Sign(key Key, c Claims) (string, error) {
	if len(key) == 0 {
		return "", ErrKey
	}
	if c.User == "" {
		return "", fmt.Errorf("auth: token needs a user")
	}
	if _, err := ParseRole(string(c.Role)); err != nil {
		return "", err
	}
	if c.Role == RoleAgent && c.Node == "" {
		return "", fmt.Errorf("auth: an agent credential must be bound to a node")
	}
	body, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("auth: encode claims: %w", err)
	}
	payload := tokenPrefix + base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + base64.RawURLEncoding.EncodeToString(mac(key, payload)), nil
}

func mac(key Key, payload string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(payload))
	return h.Sum(nil)
}

// Verify checks a token's signature and expiry at now and returns its claims.
func Verify(key Key, token string, now time.Time) (Claims, error) {
	token = strings.TrimSpace(token)
	i := strings.LastIndexByte(token, '.')
	if !strings.HasPrefix(token, tokenPrefix) || i <= len(tokenPrefix) {
		return Claims{}, ErrMalformed
	}
	payload, sig := token[:i], token[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return Claims{}, ErrMalformed
	}
	if !hmac.Equal(got, mac(key, payload)) {
		return Claims{}, ErrBadSignature
	}
	body, err := base64.RawURLEncoding.DecodeString(payload[len(tokenPrefix):])
	if err != nil {
		return Claims{}, ErrMalformed
	}
	var c Claims
	if err := json.Unmarshal(body, &c); err != nil {
		return Claims{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if _, err := ParseRole(string(c.Role)); err != nil || c.User == "" {
		return Claims{}, ErrMalformed
	}
	if !c.Expires.IsZero() && !now.Before(c.Expires) {
		return Claims{}, fmt.Errorf("%w at %s", ErrExpired, c.Expires.UTC().Format(time.RFC3339))
	}
	return c, nil
}
