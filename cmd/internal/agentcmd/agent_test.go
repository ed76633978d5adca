package agentcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentTokenFromFlagOrFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "n1.token")
	if err := os.WriteFile(good, []byte("  tok-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token, file, want, wantErr string
	}{
		{"flag only", "tok-flag", "", "tok-flag", ""},
		{"neither: resolved later", "", "", "", ""},
		{"file, trimmed", "", good, "tok-123", ""},
		{"both", "tok-flag", good, "", "--token and --token-file"},
		{"missing file", "", filepath.Join(dir, "nope"), "", "--token-file"},
		{"empty file", "", empty, "", "is empty"},
	} {
		got, err := agentToken(tc.token, tc.file)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
