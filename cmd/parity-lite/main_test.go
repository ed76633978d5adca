package main

import (
	"bytes"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestRunHandsOtherVerbsToParity(t *testing.T) {
	cases := []struct {
		name     string
		argv     []string
		full     string
		wantHand bool
		code     int
		stderr   string
		stdout   string
	}{
		{name: "own verb stays", argv: []string{"parity-lite", "submit", "--help"}, full: "/opt/parity", code: 0, stdout: "#SBATCH directives"},
		{name: "slurm name stays", argv: []string{"/usr/bin/squeue", "--help"}, full: "/opt/parity", code: 0, stdout: "--noheader"},
		{name: "root help stays", argv: []string{"parity-lite", "--help"}, full: "/opt/parity", code: 0, stdout: "submit"},
		{name: "daemon verb handed", argv: []string{"parity-lite", "controller", "--config", "x"}, full: "/opt/parity", wantHand: true},
		{name: "accounting name handed", argv: []string{"/usr/bin/sacct", "-j", "3"}, full: "/opt/parity", wantHand: true},
		{name: "no parity beside", argv: []string{"parity-lite", "controller"}, code: 1, stderr: `unknown command "controller"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var handed []string
			fb := fallback{
				find: func() string { return c.full },
				exec: func(path string, argv []string) error {
					if path != c.full {
						t.Errorf("exec %q, want %q", path, c.full)
					}
					handed = argv
					return errors.New("stand-in exec")
				},
			}
			var out, errb bytes.Buffer
			code := run(t.Context(), c.argv, &out, &errb, fb)
			if c.wantHand {
				if !slices.Equal(handed, c.argv) {
					t.Errorf("handed %q, want %q", handed, c.argv)
				}
				if !strings.Contains(errb.String(), "stand-in exec") {
					t.Errorf("a failed hand-off is not reported: %q", errb.String())
				}
				return
			}
			if handed != nil {
				t.Errorf("handed %q to parity, want it served here", handed)
			}
			if code != c.code || !strings.Contains(out.String(), c.stdout) || !strings.Contains(errb.String(), c.stderr) {
				t.Errorf("exit %d\nstdout %.300q\nstderr %q", code, out.String(), errb.String())
			}
		})
	}
}

// TestLeanImports keeps parity-lite lean: each package linked in costs
// its initialisation on every sbatch call.
func TestLeanImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to list imports with")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	heavy := []string{
		"github.com/parityhpc/parity/scheduler/controller", "github.com/parityhpc/parity/scheduler/agent",
		"github.com/parityhpc/parity/scheduler/store",
		"github.com/parityhpc/parity/scheduler/config", "github.com/parityhpc/parity/labs",
		"github.com/parityhpc/parity/conformance", "github.com/parityhpc/parity/vendors",
		"github.com/parityhpc/parity/reports", "modernc.org/", "go.etcd.io/bbolt", "github.com/prometheus/",
		"github.com/onsi/", "github.com/NVIDIA/", "gopkg.in/yaml",
	}
	// scheduler/accounting (sacct's filters and records, which the API
	// converts) comes with go.yaml.in/yaml/v3 for its account files: about
	// 0.1 ms and 0.3-0.7 ms of initialisation, measured with inittrace.
	for _, pkg := range strings.Fields(string(out)) {
		for _, h := range heavy {
			if strings.HasPrefix(pkg, h) {
				t.Errorf("parity-lite links %s", pkg)
			}
		}
	}
}
