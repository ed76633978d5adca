package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/scheduler/store"
)

const acctCluster = `
cluster: acct
admins: [root]
partitions:
  - name: h100
    nodes: gpu01
nodes:
  - names: gpu01
accounts:
  - name: physics
    shares: 3
    users: [alice, bob]
  - name: chem
    users: [carol]
`

// startAcctController runs a controller over the test ledger (ledger "":
// none) and returns its address and a token maker.
func startAcctController(t *testing.T, ledger string) (string, func(user string, role auth.Role) string) {
	t.Helper()
	cfg, err := config.Parse("acct.yaml", []byte(acctCluster))
	if err != nil {
		t.Fatal(err)
	}
	opts := controller.Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: t.TempDir(), MetricsAddr: "off", NoScheduler: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if ledger != "" {
		l, err := store.OpenSQLite(context.Background(), ledger, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		opts.Ledger = l
	}
	c, err := controller.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.Addr(), func(user string, role auth.Role) string {
		tok, err := auth.Sign(c.Key(), auth.Claims{User: user, Role: role, IssuedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
}

// acct and share ask the controller with --controller (or
// $PARITY_CONTROLLER): users see their own lines, admins everyone's.
func TestAcctFromTheController(t *testing.T) {
	addr, token := startAcctController(t, testLedger(t))
	cols := []string{"-X", "-D", "-P", "-n", "-S", "2024-03-01", "-E", "now", "-o", "JobID,User,AllocTRES"}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"alice by flag", nil, append([]string{"--controller", addr, "--token", token("alice", auth.RoleUser)}, cols...),
			"10|alice|billing=16,cpu=8,gres/gpu=2,gres/gpu:h100=2,mem=64G,node=1\n"},
		{"bob through the environment", map[string]string{client.EnvController: addr, client.EnvToken: token("bob", auth.RoleUser)}, cols,
			"11|bob|billing=16,cpu=8,gres/gpu=2,gres/gpu:mi300x=2,mem=64G,node=1\n"},
		{"bob asking for alice", map[string]string{client.EnvController: addr, client.EnvToken: token("bob", auth.RoleUser)},
			append([]string{"-u", "alice"}, cols...), ""},
		{"root sees everyone", map[string]string{client.EnvController: addr, client.EnvToken: token("root", auth.RoleAdmin)},
			append([]string{"-o", "JobID,User"}, cols[:len(cols)-2]...), "10|alice\n11|bob\n12|carol\n12|carol\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runAcctCmd(t, newAcctCmdWith(testAcctEnv(tc.env)), tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if out != tc.want {
				t.Fatalf("output:\n%q\nwant:\n%q", out, tc.want)
			}
		})
	}
}

func TestShareFromTheController(t *testing.T) {
	addr, token := startAcctController(t, testLedger(t))
	env := testAcctEnv(map[string]string{client.EnvController: addr, client.EnvToken: token("alice", auth.RoleUser)})
	out, err := runAcctCmd(t, newShareCmdWith(env), "-P")
	if err != nil {
		t.Fatal(err)
	}
	// The controller's usage is what its scheduler charged since it
	// started (none here), not the ledger's history; bob's row is hidden.
	want := "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\n" +
		"root|||1.000000|0|0.000000|\n" +
		"chem||1|0.250000|0|0.000000|\n" +
		"physics||3|0.750000|0|0.000000|\n" +
		"physics|alice|1|0.500000|0|0.000000|1.000000\n"
	if out != want {
		t.Errorf("share as alice:\n%s\nwant:\n%s", out, want)
	}
}

// Asking a controller wrongly says what to fix.
func TestAcctControllerErrors(t *testing.T) {
	addr, token := startAcctController(t, "")
	alice := token("alice", auth.RoleUser)
	tests := []struct {
		name string
		run  func() (string, error)
		want string
	}{
		{"no ledger behind the controller", func() (string, error) {
			return runAcctCmd(t, newAcctCmdWith(testAcctEnv(nil)), "--controller", addr, "--token", alice)
		}, "keeps no accounting ledger"},
		{"file and controller", func() (string, error) {
			return runAcctCmd(t, newAcctCmdWith(testAcctEnv(nil)), "--controller", addr, "--db", "x.db")
		}, "exclusive"},
		{"file settings with the controller", func() (string, error) {
			return runAcctCmd(t, newShareCmdWith(testAcctEnv(nil)), "--controller", addr, "--token", alice, "--half-life", "1-0")
		}, "--half-life applies to a ledger file"},
		{"unknown account", func() (string, error) {
			return runAcctCmd(t, newShareCmdWith(testAcctEnv(nil)), "--controller", addr, "--token", alice, "-A", "nope")
		}, `no account "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
