package userverbs

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// testRoot is a root command with the user verbs, built on env.
func testRoot(env userEnv, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "parity", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(commandsWith(env)...)
	return root
}

// runCLI runs argv (argv[0] decides the verb, as for the real binary) the
// way the binaries' main does and returns stdout, stderr and the exit status.
func runCLI(env userEnv, argv ...string) (string, string, int) {
	var out, errb bytes.Buffer
	root := testRoot(env, &out, &errb)
	code := Execute(context.Background(), root, Invoked(root, argv, SlurmVerb), &errb)
	return out.String(), errb.String(), code
}

var testNow = time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)

// testEnv is a user environment with fixed time, the given variables and
// working directory, and stdin.
func testEnv(dir string, vars map[string]string, stdin string) userEnv {
	return userEnv{
		now: func() time.Time { return testNow }, loc: time.UTC,
		getenv: func(k string) string { return vars[k] },
		environ: func() []string {
			var out []string
			for k, v := range vars {
				out = append(out, k+"="+v)
			}
			slices.Sort(out)
			return out
		},
		getwd:    func() (string, error) { return dir, nil },
		hostname: func() (string, error) { return "login1", nil },
		stdin:    strings.NewReader(stdin),
	}
}

func TestSlurmVerb(t *testing.T) {
	cases := map[string]string{"sbatch": "submit", "squeue": "queue", "sinfo": "nodes", "scancel": "cancel",
		"scontrol": "scontrol", "sprio": "prio", "srun": "srun", "salloc": "salloc", "sacctmgr": "acctmgr"}
	for name, want := range cases {
		got, ok := SlurmVerb(name)
		if !ok || got != want {
			t.Errorf("SlurmVerb(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	// Accounting names read the ledger: the full binary serves them.
	for _, name := range []string{"parity", "SBATCH", "sbatch.sh", "", "sacct", "sshare", "sreport"} {
		if v, ok := SlurmVerb(name); ok {
			t.Errorf("SlurmVerb(%q) = %q, want no mapping", name, v)
		}
	}
	names := SlurmNames()
	if len(names) != len(cases) || !slices.IsSorted(names) {
		t.Errorf("SlurmNames = %v", names)
	}
	for _, n := range names {
		if _, ok := cases[n]; !ok {
			t.Errorf("SlurmNames lists %q, which SlurmVerb does not serve", n)
		}
	}
	args := []struct{ in, want []string }{
		{[]string{"/usr/bin/sbatch", "-p", "gpu", "x.sh"}, []string{"submit", "-p", "gpu", "x.sh"}},
		{[]string{"squeue", "-u", "alice"}, []string{"queue", "-u", "alice"}},
		{[]string{"./scontrol", "show", "job", "12"}, []string{"scontrol", "show", "job", "12"}},
		{[]string{"/opt/parity/bin/parity", "queue"}, []string{"queue"}},
		{nil, nil},
	}
	for _, c := range args {
		if got := CompatArgs(c.in, SlurmVerb); !slices.Equal(got, c.want) {
			t.Errorf("CompatArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSlurmVersion: a Slurm-named command answers --version as Slurm does
// (tools parse "slurm X.Y.Z"); parity's own --version and any other call
// are left to the verbs.
func TestSlurmVersion(t *testing.T) {
	cases := []struct {
		argv []string
		want bool
	}{
		{[]string{"/usr/bin/sbatch", "--version"}, true},
		{[]string{"squeue", "-V"}, true},
		{[]string{"scontrol", "version"}, true},
		{[]string{"sinfo", "version"}, false}, // only scontrol has the word
		{[]string{"squeue", "-u", "alice", "--version"}, false},
		{[]string{"parity", "--version"}, false},
		{[]string{"sinfo"}, false},
		{nil, false},
	}
	for _, c := range cases {
		var b strings.Builder
		got := SlurmVersion(c.argv, SlurmVerb, &b, "1.2.3")
		if got != c.want || (got && b.String() != "slurm 22.05.8 (parity 1.2.3)\n") || (!got && b.Len() > 0) {
			t.Errorf("SlurmVersion(%q) = %v, printed %q", c.argv, got, b.String())
		}
	}
}

func TestParseScontrol(t *testing.T) {
	cases := []struct {
		words             []string
		command           string
		args              []string
		oneLiner, details bool
		json              bool
		controller, token string
		wantErr, wantHelp bool
	}{
		{words: []string{"show", "job", "12"}, command: "show", args: []string{"job", "12"}},
		{words: []string{"-o", "show", "node", "n1"}, command: "show", args: []string{"node", "n1"}, oneLiner: true},
		{words: []string{"-dd", "show", "job"}, command: "show", args: []string{"job"}, details: true},
		{words: []string{"show", "job", "12", "--json", "--controller", "h:1", "--token=t"}, command: "show", args: []string{"job", "12"},
			json: true, controller: "h:1", token: "t"},
		{words: []string{"UPDATE", "JobId=12", "TimeLimit=2:00:00"}, command: "update", args: []string{"JobId=12", "TimeLimit=2:00:00"}},
		{words: []string{"update", "NodeName=n[1-2]", "State=DRAIN", "Reason=bad fan"}, command: "update",
			args: []string{"NodeName=n[1-2]", "State=DRAIN", "Reason=bad fan"}},
		{words: []string{"requeuehold", "5,6"}, command: "requeuehold", args: []string{"5,6"}},
		{words: []string{"--help"}, wantHelp: true},
		{words: []string{"-x", "show"}, wantErr: true},
		{words: []string{"show", "--controller"}, wantErr: true},
	}
	for _, c := range cases {
		a, err := parseScontrol(c.words)
		if (err != nil) != c.wantErr {
			t.Errorf("parseScontrol(%q) error = %v", c.words, err)
			continue
		}
		if err != nil {
			continue
		}
		if a.command != c.command || !slices.Equal(a.args, c.args) || a.show.oneLiner != c.oneLiner || a.show.details != c.details ||
			a.client.json != c.json || a.client.controller != c.controller || a.client.token != c.token || a.help != c.wantHelp {
			t.Errorf("parseScontrol(%q) = %+v", c.words, a)
		}
	}
}

func TestScontrolOffline(t *testing.T) {
	env := testEnv(t.TempDir(), map[string]string{"SLURM_JOB_NODELIST": "gpu[01-03],cpu1"}, "")
	cases := []struct {
		argv []string
		out  string
		code int
		err  string
	}{
		{[]string{"scontrol", "show", "hostnames", "n[1-3]"}, "n1\nn2\nn3\n", 0, ""},
		{[]string{"scontrol", "show", "hostnames"}, "gpu01\ngpu02\ngpu03\ncpu1\n", 0, ""},
		{[]string{"scontrol", "show", "hostlist", "n1,n2,n3,x"}, "n[1-3],x\n", 0, ""},
		{[]string{"scontrol", "show", "hostlistsorted", "n3,n1,n2"}, "n[1-3]\n", 0, ""},
		{[]string{"parity", "show", "hostnames", "n[1-"}, "", 1, "parity: show: hostnames: invalid hostlist"},
		{[]string{"scontrol", "frobnicate", "12"}, "", 1, "scontrol: error: invalid keyword: frobnicate"},
		{[]string{"scontrol", "show", "widget"}, "", 1, `scontrol: error: unknown entity "widget"`},
		{[]string{"scontrol", "update", "JobId=1", "Frobs=2"}, "", 1, `scontrol: error: unknown parameter "frobs"`},
		{[]string{"scontrol", "hold"}, "", 1, "scontrol: error: hold: missing arguments"},
	}
	for _, c := range cases {
		out, errs, code := runCLI(env, c.argv...)
		if out != c.out || code != c.code || !strings.HasPrefix(errs, c.err) {
			t.Errorf("%q: out=%q err=%q code=%d; want out=%q err prefix %q code %d", c.argv, out, errs, code, c.out, c.err, c.code)
		}
	}
}

func TestHelpAndUsage(t *testing.T) {
	env := testEnv(t.TempDir(), nil, "")
	cases := []struct {
		argv []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{[]string{"sbatch", "--help"}, 0, "#SBATCH directives are read", ""},
		{[]string{"squeue", "--help"}, 0, "--noheader", ""},
		{[]string{"sinfo", "--help"}, 0, "--gpus", ""},
		{[]string{"sprio", "--help"}, 0, "--weights", ""},
		{[]string{"scontrol", "--help"}, 0, "requeuehold", ""},
		{[]string{"scontrol"}, 0, "show job|node|partition", ""},
		{[]string{"parity", "show"}, 1, "", "parity: show: want job|node|partition"},
		{[]string{"parity", "update"}, 1, "", "parity: update: want JobId=ID"},
		{[]string{"parity", "hold"}, 1, "", "parity: hold: want one or more job ids"},
		{[]string{"parity", "explain", "1", "2"}, 1, "", "parity: explain: want one job id"},
		{[]string{"scancel", "--bogus"}, 1, "", "unknown flag: --bogus"},
	}
	for _, c := range cases {
		out, errs, code := runCLI(env, c.argv...)
		if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errs, c.err) {
			t.Errorf("%q: exit %d\nstdout %.200q\nstderr %q", c.argv, code, out, errs)
		}
	}
}
