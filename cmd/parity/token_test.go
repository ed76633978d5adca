package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
)

// TestTokenCreate: the token verifies against the cluster key for the
// user, and --slurm-jwt prints it in scontrol token's SLURM_JWT= form.
func TestTokenCreate(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "cluster.key")
	key, err := auth.LoadOrCreateKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		prefix string
	}{
		{"plain", nil, ""},
		{"slurm jwt", []string{"--slurm-jwt"}, "SLURM_JWT="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := newTokenCmd()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetArgs(append([]string{"create", "--user", "alice", "--key-file", keyFile, "--ttl", "1:00:00"}, tt.args...))
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			line := strings.TrimSuffix(out.String(), "\n")
			tok, ok := strings.CutPrefix(line, tt.prefix)
			if !ok || strings.Contains(line, "\n") {
				t.Fatalf("output %q: want one line starting %q", out.String(), tt.prefix)
			}
			c, err := auth.Verify(key, tok, time.Now())
			if err != nil || c.User != "alice" || c.Role != auth.RoleUser {
				t.Fatalf("token %q: claims %+v, %v", tok, c, err)
			}
		})
	}
}
