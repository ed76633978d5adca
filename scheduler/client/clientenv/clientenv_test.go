package clientenv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv(EnvToken, "")
	t.Setenv(EnvController, "")
	if _, err := ResolveToken(""); !errors.Is(err, ErrNoToken) {
		t.Errorf("no token anywhere: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(cfg, "parity"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "parity", "token"), []byte("  from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ flag, env, want string }{
		{"", "", "from-file"},
		{"", " from-env ", "from-env"},
		{"from-flag", "from-env", "from-flag"},
	}
	for _, c := range cases {
		t.Setenv(EnvToken, c.env)
		if got, err := ResolveToken(c.flag); err != nil || got != c.want {
			t.Errorf("ResolveToken(%q) with $%s=%q = %q, %v; want %q", c.flag, EnvToken, c.env, got, err, c.want)
		}
	}
	if got := ResolveAddr(""); got != DefaultAddr {
		t.Errorf("default address %q", got)
	}
	t.Setenv(EnvController, "ctl:1")
	if got := ResolveAddr(""); got != "ctl:1" {
		t.Errorf("address from $%s = %q", EnvController, got)
	}
	if got := ResolveAddr("flag:2"); got != "flag:2" {
		t.Errorf("address from the flag = %q", got)
	}
}

func TestHint(t *testing.T) {
	cases := []struct{ code, want string }{
		{"Unauthenticated", "parity token create"},
		{"PermissionDenied", "operator or admin"},
		{"Unavailable", "is the controller running at h:1?"},
		{"DeadlineExceeded", "is the controller running at h:1?"},
		{"InvalidArgument", ""},
	}
	for _, c := range cases {
		got := Hint(c.code, "h:1")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Hint(%q) = %q, want one containing %q", c.code, got, c.want)
		}
	}
}
