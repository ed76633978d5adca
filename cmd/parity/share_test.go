package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeAccounts(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "accounts.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// With no decay, RawUsage is billing-seconds from the ledger: alice
// 16 × 2 h, bob 16 × 4 h, carol 8 × 1 h for each of her two runs.
func TestShareFromLedger(t *testing.T) {
	path := testLedger(t)
	accts := writeAccounts(t, `
half_life: 0
accounts:
  - name: physics
    shares: 3
    users: [{name: alice}, {name: bob}]
  - name: chem
    users: [{name: carol}]
`)
	out, err := runAcctCmd(t, newShareCmdWith(testAcctEnv(nil)), "--ledger", path, "--accounts", accts, "-P", "-l")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare|NormUsage|LevelFS",
		"root|||1.000000|403200|1.000000||1.000000|1.000000",
		"chem||1|0.250000|57600|0.142857||0.142857|1.750000",
		"chem|carol|1|1.000000|57600|1.000000|1.000000|0.142857|1.000000",
		"physics||3|0.750000|345600|0.857143||0.857143|0.875000",
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d = %q, want %q", i, lines[i], w)
		}
	}
	if len(lines) != 7 {
		t.Errorf("got %d lines:\n%s", len(lines), out)
	}
	// Decay through the flag: a 1-day half-life shrinks every usage.
	out, err = runAcctCmd(t, newShareCmdWith(testAcctEnv(nil)), "--ledger", path, "--accounts", accts, "-P", "-n", "-u", "bob", "-A", "physics", "--half-life", "1-0")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Split(strings.Split(strings.TrimSpace(out), "\n")[2], "|")
	if fields[1] != "bob" || fields[4] == "230400" || fields[4] == "0" {
		t.Errorf("bob with decay = %v, want a decayed RawUsage below 230400", fields)
	}
}

func TestShareBadInput(t *testing.T) {
	path := testLedger(t)
	good := writeAccounts(t, "accounts:\n  - name: physics\n")
	tests := []struct {
		args    []string
		mention string
	}{
		{[]string{"--accounts", writeAccounts(t, "accounts:\n  - name: physics\n    shares: many\n")}, `"many"`},
		{[]string{"--accounts", filepath.Join(t.TempDir(), "missing.yaml")}, "--accounts"},
		{[]string{"--accounts", good, "--half-life", "soon"}, `--half-life`},
		{[]string{"--accounts", good, "--reset", "hourly"}, `"hourly"`},
		{[]string{"--accounts", good, "--algorithm", "lottery"}, `"lottery"`},
		{[]string{"--accounts", good, "-A", "biology"}, `"biology"`},
		{[]string{"--accounts", writeAccounts(t, "accounts:\n  - name: a\n    parent: nowhere\n")}, "nowhere"},
	}
	for _, tc := range tests {
		_, err := runAcctCmd(t, newShareCmdWith(testAcctEnv(nil)), append(tc.args, "--ledger", path)...)
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%v: err = %v, want mention of %s", tc.args, err, tc.mention)
		}
	}
}
