package userverbs

import (
	"context"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
)

// acctmgrCluster is the anchor's shape for sacctmgr: cluster "anchor",
// root an admin, no accounts yet (the anchor's own root_acct and root
// user are left out of the recorded answers).
const acctmgrCluster = `
cluster: anchor
admins: [root]
partitions:
  - name: gpu
    nodes: n[1-2]
    default: true
nodes:
  - names: n[1-2]
    gpus: 4
`

// acctmgrCase is one recorded sacctmgr run on the anchor.
type acctmgrCase struct {
	who            string // the user it ran as (root when unnamed)
	args           []string
	stdout, stderr string
	rc             int
}

func recordedAcctmgr(t *testing.T, file string) []acctmgrCase {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []acctmgrCase
	var cur *acctmgrCase
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "$ "):
			who, rest := "root", strings.TrimPrefix(l, "$ ")
			if strings.HasPrefix(rest, "[") {
				who, rest, _ = strings.Cut(strings.TrimPrefix(rest, "["), "] ")
			}
			out = append(out, acctmgrCase{who: who, args: strings.Fields(strings.TrimPrefix(rest, "sacctmgr "))})
			cur = &out[len(out)-1]
		case strings.HasPrefix(l, "[rc="):
			cur.rc, err = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(l, "[rc="), "]"))
			if err != nil {
				t.Fatal(err)
			}
			cur = nil
		case strings.HasPrefix(l, "! "):
			cur.stderr += strings.TrimPrefix(l, "! ") + "\n"
		case cur != nil:
			cur.stdout += l + "\n"
		}
	}
	return out
}

// anchorOnly are the recorded lines of what up-accounting.sh made on the
// anchor (root_acct, and the root user's associations).
var anchorOnly = []*regexp.Regexp{regexp.MustCompile(`root_acct`), regexp.MustCompile(`^\s*root\s+root\s+Administ\+`),
	regexp.MustCompile(`^ ?root\|root(\||\n)`), regexp.MustCompile(`anchor\s+root\s+root\s`),
	regexp.MustCompile(`^\s*root default root account\s+root\s+anchor\s+root\s`), regexp.MustCompile(`^\s+root\s+root\s+normal\s+$`)}

// parityOnly are the lines Parity prints that the anchor cannot: the
// GPUs Parity always accounts (the anchor's AccountingStorageTRES leaves
// gres/gpu out, so its show tres has no gres rows).
var parityOnly = []*regexp.Regexp{regexp.MustCompile(`^\s+gres\s+gpu`)}

func without(s string, res []*regexp.Regexp) string {
	lines := strings.SplitAfter(s, "\n")
	lines = slices.DeleteFunc(lines, func(l string) bool {
		return slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(l) })
	})
	return strings.Join(lines, "")
}

func withoutAnchorOnly(s string) string { return without(s, anchorOnly) }

func startAcctmgrCluster(t *testing.T, stateDir string) *cliCluster {
	t.Helper()
	cfg, err := config.Parse("anchor.yaml", []byte(acctmgrCluster))
	if err != nil {
		t.Fatal(err)
	}
	c, err := controller.New(controller.Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: stateDir, MetricsAddr: "off",
		NoScheduler: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &cliCluster{t: t, c: c, dir: t.TempDir()}
}

// sacctmgr answers the cases run on the Slurm 22.05 accounting anchor as
// Slurm did, in order against one cluster: the same stdout, stderr and
// exit status for adds, modifies, deletes, refusals and the show
// listings (tables, -n, -p, -P, format=, where, tree, withassoc).
func TestSacctmgrAsSlurm2205(t *testing.T) {
	runRecorded(t, "testdata/slurm2205_sacctmgr.txt", 70)
}

// An operator (AdminLevel=Operator, set at run time) adds, modifies and
// deletes accounts and users but not QOS, and sets no admin level; a
// user changes nothing; everyone may show: each refusal and output as
// the Slurm 22.05 anchor answered the same users.
func TestSacctmgrAuthorityAsSlurm2205(t *testing.T) {
	runRecorded(t, "testdata/slurm2205_sacctmgr_authority.txt", 20)
}

// runRecorded runs a recorded file's cases in order against one cluster,
// each as the user it ran as on the anchor.
func runRecorded(t *testing.T, file string, least int) {
	t.Helper()
	cl := startAcctmgrCluster(t, t.TempDir())
	cases := recordedAcctmgr(t, file)
	if len(cases) < least {
		t.Fatalf("%d recorded cases, want at least %d", len(cases), least)
	}
	for _, c := range cases {
		out, errs, code := runCLI(cl.as(c.who, nil), append([]string{"sacctmgr"}, c.args...)...)
		want := withoutAnchorOnly(c.stdout)
		cmd := strings.Join(c.args, " ")
		out = without(out, parityOnly)
		if strings.HasPrefix(cmd, "show cluster") {
			// The anchor's slurmctld listens on 16827, this controller on
			// a port the OS chose.
			out = strings.Replace(out, " "+cl.port()+" ", " 16827 ", 1)
		}
		if cmd == "show account withassoc" {
			// Slurm lists an account's users in its tree's order (the
			// newest association first); compare the rows as a set.
			out, want = sortedLines(out), sortedLines(want)
		}
		if code != c.rc || out != want || errs != c.stderr {
			t.Errorf("sacctmgr %s: exit %d\n--- stdout\n%s--- stderr\n%s--- Slurm: exit %d\n--- stdout\n%s--- stderr\n%s",
				cmd, code, out, errs, c.rc, want, c.stderr)
		}
	}
}

func sortedLines(s string) string {
	l := strings.SplitAfter(s, "\n")
	slices.Sort(l)
	return strings.Join(l, "")
}

// Without -i sacctmgr shows the change, asks, and commits only on "y"
// (the recorded prompt: "Changes Discarded" otherwise, status 0); a user
// may show but not change, and is told so as Slurm tells them.
func TestSacctmgrPromptAndAuthority(t *testing.T) {
	cl := startAcctmgrCluster(t, t.TempDir())
	root, alice := cl.as("root", nil), cl.as("alice", nil)
	root.stdin = strings.NewReader("n\n")
	out, _, code := runCLI(root, "sacctmgr", "add", "account", "physics2")
	if code != 0 || !strings.HasSuffix(out, "  A = physics2   C = anchor    \nWould you like to commit changes? (You have 30 seconds to decide)\n(N/y): \n Changes Discarded\n") {
		t.Fatalf("declined add: exit %d\n%s", code, out)
	}
	if out := cl.ok(alice, "sacctmgr", "-n", "-P", "show", "account", "format=account"); out != "root\n" {
		t.Fatalf("after a declined add the accounts are %q", out)
	}
	root.stdin = strings.NewReader("y\n")
	if _, _, code := runCLI(root, "sacctmgr", "add", "account", "physics2"); code != 0 {
		t.Fatalf("accepted add: exit %d", code)
	}
	if out := cl.ok(alice, "sacctmgr", "-n", "-P", "show", "account", "format=account,org"); out != "physics2|physics2\nroot|root\n" {
		t.Fatalf("after an accepted add the accounts are %q", out)
	}
	out, errs, code := runCLI(alice, "sacctmgr", "-i", "add", "user", "bob", "account=physics2")
	if code != 1 || !strings.HasPrefix(out, " Adding User(s)\n  bob\n") || errs != " Problem adding users: Access/permission denied\n" {
		t.Errorf("a user's add: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// The audit trail: sacctmgr show transaction reads the decision log.
	out = cl.ok(alice, "sacctmgr", "-P", "-n", "show", "txn")
	if f := strings.Split(strings.TrimSpace(out), "|"); len(f) != 5 || f[1] != "Add Accounts" || f[2] != "root" || f[3] != "name='physics2'" ||
		!strings.Contains(f[4], `after=[{"Name":"physics2"`) {
		t.Errorf("show txn: %q", out)
	}
}

// port is the controller's listening port, as show cluster prints it.
func (cl *cliCluster) port() string {
	_, p, _ := strings.Cut(cl.c.Addr(), ":")
	return p
}
