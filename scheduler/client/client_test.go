package client

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestResolveToken(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("HOME", home)
	t.Setenv(EnvToken, "")
	if _, err := ResolveToken(""); !errors.Is(err, ErrNoToken) {
		t.Fatalf("no sources: %v", err)
	}
	path, err := TokenPath()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ flag, env, want string }{
		{"", "", "from-file"},
		{"", "from-env", "from-env"},
		{"from-flag", "from-env", "from-flag"},
	}
	for _, tc := range tests {
		t.Setenv(EnvToken, tc.env)
		got, err := ResolveToken(tc.flag)
		if err != nil || got != tc.want {
			t.Errorf("flag %q env %q: got %q, %v; want %q", tc.flag, tc.env, got, err, tc.want)
		}
	}
}

func TestResolveAddrAndMessage(t *testing.T) {
	t.Setenv(EnvController, "")
	if got := ResolveAddr(""); got != DefaultAddr {
		t.Fatalf("default: %q", got)
	}
	t.Setenv(EnvController, "ctl:1")
	if got := ResolveAddr(""); got != "ctl:1" {
		t.Fatalf("env: %q", got)
	}
	if got := ResolveAddr("x:2"); got != "x:2" {
		t.Fatalf("flag: %q", got)
	}
	if got := Message(status.Error(codes.InvalidArgument, "--time=5: bad")); got != "--time=5: bad" {
		t.Fatalf("status message: %q", got)
	}
	if got := Message(errors.New("plain")); got != "plain" {
		t.Fatalf("plain: %q", got)
	}
}
