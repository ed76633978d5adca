package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

func TestArgs(t *testing.T) {
	cases := []struct {
		argv, want []string
	}{
		{[]string{"/usr/local/bin/sbatch", "submit", "-p", "gpu"}, []string{"submit", "-p", "gpu"}}, // a script named submit
		{[]string{"parity-sbatch", "submit", "--wrap", "x"}, []string{"--wrap", "x"}},
		{[]string{"/opt/parity/parity-sbatch", "--wrap", "x"}, []string{"--wrap", "x"}},
		{[]string{"parity-sbatch"}, []string{}},
		{nil, nil},
	}
	for _, c := range cases {
		if got := args(c.argv); !slices.Equal(got, c.want) {
			t.Errorf("args(%q) = %q, want %q", c.argv, got, c.want)
		}
	}
}

// TestLeanImports proves the binary links neither gRPC nor protobuf (nor
// cobra or the gRPC client): each package linked in costs its
// initialisation on every sbatch process.
func TestLeanImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to list imports with")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Fields(string(out))
	heavy := []string{"google.golang.org/grpc", "google.golang.org/protobuf", "google.golang.org/genproto", "golang.org/x/net",
		"github.com/spf13/", "gopkg.in/yaml", "go.yaml.in/", "crypto/tls", "net/http", "github.com/parityhpc/parity/scheduler/api/parityv1",
		"github.com/parityhpc/parity/scheduler/controller", "github.com/parityhpc/parity/scheduler/client/format"}
	for _, pkg := range pkgs {
		for _, h := range heavy {
			if strings.HasPrefix(pkg, h) {
				t.Errorf("parity-sbatch links %s", pkg)
			}
		}
		if pkg == "github.com/parityhpc/parity/scheduler/client" {
			t.Errorf("parity-sbatch links the gRPC client %s", pkg)
		}
	}
	if !slices.Contains(pkgs, "github.com/parityhpc/parity/scheduler/jobspec") {
		t.Error("parity-sbatch does not parse with jobspec (go list is not listing what it should)")
	}
}

// fakeBinary writes a shell script that stands in for parity-lite: it
// prints its arguments and standard input and exits 3.
func fakeBinary(t *testing.T, dir, name string) {
	t.Helper()
	script := "#!/bin/sh\necho \"" + name + " $*\"\ncat\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestWaitHandsToParity(t *testing.T) {
	cases := []struct {
		name    string
		bins    []string
		req     *jobspec.Request
		stdin   string
		code    int
		out     string
		errPart string
	}{
		{name: "parity-lite preferred", bins: []string{"parity-lite", "parity"}, req: &jobspec.Request{ScriptPath: "job.sh"},
			stdin: "untouched", code: 3, out: "parity-lite -W job.sh\nuntouched"},
		{name: "parity when alone", bins: []string{"parity"}, req: &jobspec.Request{Wrap: "x"}, code: 3, out: "parity -W job.sh\n"},
		{name: "script from stdin is given again", bins: []string{"parity-lite"}, req: &jobspec.Request{Script: []byte("#!/bin/sh\nhostname\n")},
			stdin: "", code: 3, out: "parity-lite -W job.sh\n#!/bin/sh\nhostname\n"},
		{name: "neither", code: 1, errPart: "need parity-lite or parity in"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, b := range c.bins {
				fakeBinary(t, dir, b)
			}
			var out, errb bytes.Buffer
			w := waiter{dir: func() (string, error) { return dir, nil }, stdin: strings.NewReader(c.stdin), stdout: &out, stderr: &errb}
			req := c.req
			if req == nil {
				req = &jobspec.Request{ScriptPath: "job.sh"}
			}
			code := w.handOff(context.Background(), []string{"-W", "job.sh"}, req)
			if code != c.code || out.String() != c.out || !strings.Contains(errb.String(), c.errPart) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out.String(), errb.String(), c.code, c.out, c.errPart)
			}
		})
	}
}

// TestBinaryEndToEnd builds parity-sbatch, links sbatch to it as
// install-compat does and submits through both names to a controller.
func TestBinaryEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to build with")
	}
	bin := t.TempDir()
	exe := filepath.Join(bin, "parity-sbatch")
	build := exec.Command(goBin, "build", "-o", exe, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "sbatch")); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("c.yaml", []byte("cluster: c\npartitions:\n  - name: gpu\n    nodes: n1\nnodes:\n  - names: n1\n    gpus: 4\n    gpuType: h100\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := controller.New(controller.Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: t.TempDir(), MetricsAddr: "off",
		NoScheduler: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tok, err := auth.Sign(c.Key(), auth.Claims{User: "alice", Role: auth.RoleUser, IssuedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PARITY_CONTROLLER="+c.Addr(), "PARITY_TOKEN="+tok, "SBATCH_GRES=gpu:h100:2")
	for i, argv := range [][]string{
		{filepath.Join(bin, "sbatch"), "--parsable", "--wrap", "hostname"},
		{exe, "submit", "--parsable", "-J", "named", "--wrap", "hostname"},
	} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env, cmd.Dir = env, t.TempDir()
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != string(rune('1'+i)) {
			t.Errorf("%q: %v: %s", argv, err, out)
		}
	}
	// Tools ask sbatch its version to learn what they talk to.
	out, err := exec.Command(filepath.Join(bin, "sbatch"), "--version").CombinedOutput()
	if err != nil || string(out) != "slurm 22.05.8 (parity dev)\n" {
		t.Errorf("sbatch --version: %v: %q", err, out)
	}
}
