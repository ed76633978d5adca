package sbatch

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/client/format"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

func testEnv(vars map[string]string, stdin string) Env {
	return Env{
		Now: func() time.Time { return time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC) }, Loc: time.UTC,
		Getenv: func(k string) string { return vars[k] },
		Environ: func() []string {
			var out []string
			for k, v := range vars {
				out = append(out, k+"="+v)
			}
			slices.Sort(out)
			return out
		},
		Getwd:    func() (string, error) { return "/work", nil },
		Hostname: func() (string, error) { return "login1", nil },
		Stdin:    strings.NewReader(stdin),
	}
}

// TestRunHandsOff: --wait and TLS go to the gRPC binary with the same
// arguments; what the lean path serves does not.
func TestRunHandsOff(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		vars   map[string]string
		stdin  string
		handed bool
		code   int
		out    string
	}{
		{name: "--wait", args: []string{"-W", "--wrap", "hostname"}, handed: true, code: 4},
		{name: "#SBATCH --wait from stdin", stdin: "#!/bin/sh\n#SBATCH --wait\nhostname\n", handed: true, code: 4},
		{name: "--ca", args: []string{"--ca", "/etc/parity/ca.pem", "--wrap", "hostname"}, handed: true, code: 4},
		{name: "PARITY_CA", args: []string{"--wrap", "hostname"}, vars: map[string]string{"PARITY_CA": "/etc/parity/ca.pem"}, handed: true, code: 4},
		{name: "gRPC target syntax", args: []string{"--controller", "dns:///ctl.example:6817", "--wrap", "x"}, handed: true, code: 4},
		{name: "unix socket", vars: map[string]string{"PARITY_CONTROLLER": "unix:/run/parity.sock"}, args: []string{"--wrap", "x"}, handed: true, code: 4},
		{name: "parse-only stays", args: []string{"--ca", "/x.pem", "--parse-only", "--wrap", "hostname"}, out: "wrap"},
		{name: "help stays", args: []string{"--ca", "/x.pem", "--help"}, out: "Usage:\n  sbatch"},
		{name: "warnings left to the hand-off", args: []string{"--ca", "/x.pem", "--hint=nomultithread", "--wrap", "x"}, handed: true, code: 4},
		{name: "-M asks the cluster its name", args: []string{"-M", "c1", "--wrap", "x"}, handed: true, code: 4},
		{name: "bad input stays", args: []string{"--ca", "/x.pem", "--time=abc", "--wrap", "x"}, code: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			var gotReq *jobspec.Request
			handed := false
			handOff := func(_ context.Context, args []string, req *jobspec.Request) int {
				got, gotReq, handed = args, req, true
				return 4
			}
			var out, errb bytes.Buffer
			code := Run(context.Background(), c.args, testEnv(c.vars, c.stdin), &out, &errb, handOff)
			if code != c.code || handed != c.handed || !strings.Contains(out.String(), c.out) {
				t.Fatalf("exit %d, handed %q, stdout %q, stderr %q", code, got, out.String(), errb.String())
			}
			if c.handed && errb.Len() > 0 {
				t.Errorf("printed %q before handing off (the other binary prints it again)", errb.String())
			}
			if c.handed && (!slices.Equal(got, c.args) || (c.stdin != "" && string(gotReq.Script) != c.stdin)) {
				t.Errorf("handed %q with script %q; want %q and the script read", got, gotReq.Script, c.args)
			}
		})
	}
}

// TestStampLayout: --test-only's start time prints as every verb prints
// times (format links protobuf, so the layout is repeated here).
func TestStampLayout(t *testing.T) {
	if stampLayout != format.TimeLayout {
		t.Errorf("stampLayout %q, format.TimeLayout %q", stampLayout, format.TimeLayout)
	}
}

// TestParseLeavesLimitsToTheController: the command line checks syntax
// and what no cluster allows; the cluster's MaxArraySize and the nice
// bounds are the controller's, reported in its words.
func TestParseLeavesLimitsToTheController(t *testing.T) {
	req, err := Parse(testEnv(nil, ""), []string{"--array=0-5000", "--nice=50000", "--wrap", "true"})
	if err != nil {
		t.Fatalf("refused before the controller saw it: %v", err)
	}
	if req.Array.Len() != 5001 || req.Nice != 50000 {
		t.Fatalf("array %v (size %d), nice %d", req.Array, req.Array.Len(), req.Nice)
	}
	if _, err := Parse(testEnv(nil, ""), []string{"--array=0-4000001", "--wrap", "true"}); err == nil || !strings.Contains(err.Error(), "4000000") {
		t.Fatalf("past Slurm's ceiling: %v, want a refusal naming 4000000", err)
	}
	if _, err := Parse(testEnv(nil, ""), []string{"--nice=99999999999", "--wrap", "true"}); err == nil || strings.Contains(err.Error(), "2147483645") {
		t.Fatalf("a nice that is no integer: %v, want a syntax error naming no bound", err)
	}
}
