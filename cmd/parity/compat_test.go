package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/userverbs"
)

func TestSlurmCompatVerb(t *testing.T) {
	cases := map[string]string{"sbatch": "submit", "squeue": "queue", "sinfo": "nodes", "scancel": "cancel",
		"scontrol": "scontrol", "sprio": "prio", "sacct": "acct", "sshare": "share", "sreport": "report",
		"srun": "srun", "salloc": "salloc", "sacctmgr": "acctmgr"}
	for name, want := range cases {
		got, ok := slurmCompatVerb(name)
		if !ok || got != want {
			t.Errorf("slurmCompatVerb(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"parity", "parity-lite", "SBATCH", "sbatch.sh", ""} {
		if v, ok := slurmCompatVerb(name); ok {
			t.Errorf("slurmCompatVerb(%q) = %q, want no mapping", name, v)
		}
	}
	if got := slurmCommandNames(); len(got) != len(cases) || !slices.IsSorted(got) {
		t.Errorf("slurmCommandNames = %v", got)
	}
	args := []struct{ in, want []string }{
		{[]string{"/usr/bin/sbatch", "-p", "gpu", "x.sh"}, []string{"submit", "-p", "gpu", "x.sh"}},
		{[]string{"/usr/bin/sacct", "-j", "3"}, []string{"acct", "-j", "3"}},
		{[]string{"/opt/parity/bin/parity", "queue"}, []string{"queue"}},
		{nil, nil},
	}
	for _, c := range args {
		if got := userverbs.CompatArgs(c.in, slurmCompatVerb); !slices.Equal(got, c.want) {
			t.Errorf("CompatArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEveryCompatNameHasAVerb(t *testing.T) {
	root := newRootCmd(nil, nil)
	for _, name := range slurmCommandNames() {
		verb, _ := slurmCompatVerb(name)
		if c, _, err := root.Find([]string{verb}); err != nil || c == root {
			t.Errorf("%s maps to %q, which the root command lacks", name, verb)
		}
	}
}

// writeExe writes a stand-in executable.
func writeExe(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestInstallCompat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bin")
	self := filepath.Join(t.TempDir(), "parity")
	writeExe(t, self)
	run := func(lt linkTargets, hard, force bool) (string, string, error) {
		var out, errb bytes.Buffer
		cmd := &cobra.Command{}
		cmd.SetOut(&out)
		cmd.SetErr(&errb)
		err := installCompat(cmd, dir, lt, hard, force)
		return out.String(), errb.String(), err
	}
	only := linkTargets{self: self}
	out, _, err := run(only, false, false)
	if err != nil {
		t.Fatal(err)
	}
	names := slurmCommandNames()
	for _, name := range names {
		target, err := os.Readlink(filepath.Join(dir, name))
		if err != nil || target != self {
			t.Errorf("%s -> %q, %v; want %s", name, target, err, self)
		}
		if !strings.Contains(out, filepath.Join(dir, name)+" -> "+self) {
			t.Errorf("output does not report %s:\n%s", name, out)
		}
	}
	// Again: every link is already there.
	if out, _, err = run(only, false, false); err != nil || strings.Count(out, "already there") != len(names) {
		t.Errorf("second run: %v\n%s", err, out)
	}
	// A foreign file is kept unless --force.
	foreign := filepath.Join(dir, "squeue")
	os.Remove(foreign)
	os.WriteFile(foreign, []byte("other"), 0o755)
	_, errs, err := run(only, false, false)
	if err == nil || !strings.Contains(errs, "squeue exists") {
		t.Errorf("foreign file: err=%v stderr=%q", err, errs)
	}
	if b, _ := os.ReadFile(foreign); string(b) != "other" {
		t.Error("foreign file was replaced without --force")
	}
	if _, _, err := run(only, true, true); err != nil {
		t.Fatal(err)
	}
	a, _ := os.Stat(foreign)
	b, _ := os.Stat(self)
	if fi, _ := os.Lstat(foreign); fi.Mode()&os.ModeSymlink != 0 || !os.SameFile(a, b) {
		t.Error("--hard --force did not make a hard link to the binary")
	}
}

func TestInstallCompatPrefersLean(t *testing.T) {
	bin := t.TempDir()
	self, lean := filepath.Join(bin, "parity"), filepath.Join(bin, leanName)
	writeExe(t, self)
	if got := leanBeside(self); got != "" {
		t.Fatalf("leanBeside without parity-lite = %q", got)
	}
	dir := filepath.Join(t.TempDir(), "bin")
	var out bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	// First without parity-lite, then with it: the links to parity switch
	// over without --force, the accounting names stay.
	if err := installCompat(cmd, dir, linkTargets{self: self, lean: leanBeside(self)}, false, false); err != nil {
		t.Fatal(err)
	}
	writeExe(t, lean)
	if got := leanBeside(self); got != lean {
		t.Fatalf("leanBeside = %q, want %q", got, lean)
	}
	if err := installCompat(cmd, dir, linkTargets{self: self, lean: leanBeside(self)}, false, false); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := map[string]string{"sbatch": lean, "squeue": lean, "sinfo": lean, "scancel": lean, "scontrol": lean, "sprio": lean,
		"sacct": self, "sshare": self, "sreport": self}
	for name, w := range want {
		if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != w {
			t.Errorf("%s -> %q, %v; want %s", name, got, err, w)
		}
	}
	// parity-sbatch installed later takes sbatch over, without --force.
	sb := filepath.Join(bin, sbatchName)
	writeExe(t, sb)
	if err := installCompat(cmd, dir, targetsOf(self), false, false); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want["sbatch"] = sb
	for name, w := range want {
		if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != w {
			t.Errorf("with parity-sbatch: %s -> %q, %v; want %s", name, got, err, w)
		}
	}
	// A parity-lite that is not executable is not used.
	if err := os.Chmod(lean, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := leanBeside(self); got != "" {
		t.Errorf("leanBeside with a non-executable parity-lite = %q", got)
	}
}

func TestInstallCompatUsage(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"parity", "install-compat"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "parity: install-compat: want the directory") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}
