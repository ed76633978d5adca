package shim

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

const shimArg = "__parity_shim__"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == shimArg {
		os.Exit(Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// runShim runs the shim as its own process (as the agent does) over cfg
// and returns the status it recorded.
func runShim(t *testing.T, cfg Config) (Status, string) {
	t.Helper()
	dir := t.TempDir()
	cfg.StatusFile = filepath.Join(dir, "status.json")
	if cfg.Stdout == "" {
		cfg.Stdout = filepath.Join(dir, "out")
	}
	if cfg.Dir == "" {
		cfg.Dir = dir
	}
	if cfg.Env == nil {
		cfg.Env = []string{"PATH=/usr/bin:/bin"}
	}
	path := filepath.Join(dir, "shim.json")
	if err := WriteConfig(path, cfg); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, shimArg, path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("shim: %v: %s", err, log)
	}
	st, err := ReadStatus(cfg.StatusFile)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(cfg.Stdout)
	return st, string(out) + string(log)
}

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestShimRecordsTheExactWaitStatus(t *testing.T) {
	cases := []struct {
		body         string
		code, signal int
	}{
		{"exit 0", 0, 0},
		{"exit 42", 42, 0},
		{"kill -TERM $$", 0, 15},
		{"kill -KILL $$", 0, 9},
	}
	for _, c := range cases {
		t.Run(c.body, func(t *testing.T) {
			st, out := runShim(t, Config{JobID: "1", Argv: []string{script(t, c.body)}})
			if !st.Done || st.Running || st.ExitCode != c.code || st.Signal != c.signal || st.StartError != "" {
				t.Errorf("status %+v, want exit %d signal %d: %s", st, c.code, c.signal, out)
			}
			if st.Pid == 0 || st.ShimPid == 0 || st.Started.IsZero() || st.Ended.Before(st.Started) {
				t.Errorf("status lacks pids or times: %+v", st)
			}
		})
	}
}

func TestShimKillsWhatTheScriptLeavesInItsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	st, out := runShim(t, Config{JobID: "2", Argv: []string{script(t, `( sleep 1000 & echo $! > "$1" ) ; exit 3`), pidFile}})
	if st.ExitCode != 3 {
		t.Fatalf("status %+v: %s", st, out)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	// The orphan was the shim's (it is a subreaper), killed and reaped
	// before the shim exited.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("orphan %d survived the job: kill(0) = %v", pid, err)
	}
}

func TestShimStartsTheJobWhereAndHowItWasAsked(t *testing.T) {
	dir := t.TempDir()
	errFile := filepath.Join(dir, "err")
	st, out := runShim(t, Config{JobID: "3", Argv: []string{script(t, `pwd; echo "bash_env=$BASH_ENV env=$ENV x=$X"; echo oops >&2; umask`)},
		Dir: "/nonexistent/dir", Env: []string{"PATH=/usr/bin:/bin", "BASH_ENV=/etc/be", "ENV=/etc/e", "X=1"},
		Stderr: errFile, Umask: 0o027})
	if st.ExitCode != 0 {
		t.Fatalf("status %+v: %s", st, out)
	}
	for _, want := range []string{"/tmp\n", "bash_env=/etc/be env=/etc/e x=1\n", "0027\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("job output lacks %q:\n%s", want, out)
		}
	}
	errOut, _ := os.ReadFile(errFile)
	if !strings.Contains(string(errOut), "could not chdir to /nonexistent/dir, going to /tmp instead") || !strings.Contains(string(errOut), "oops") {
		t.Errorf("stderr file: %q", errOut)
	}
}

func TestShimNeverRunsAJobItCannotConfine(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	st, _ := runShim(t, Config{JobID: "4", Argv: []string{script(t, `touch "$1"`), marker},
		ProcsFiles: []string{filepath.Join(dir, "no-such-cgroup", "cgroup.procs")}})
	if !st.Done || !strings.Contains(st.StartError, "join cgroup") {
		t.Errorf("status %+v, want a start error naming the cgroup", st)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the job ran although it could not join its cgroup (%v)", err)
	}
}

func TestWriteConfigRejectsEmptyFields(t *testing.T) {
	dir := t.TempDir()
	if err := WriteConfig(filepath.Join(dir, "a"), Config{StatusFile: "s"}); err == nil || !strings.Contains(err.Error(), "argv") {
		t.Errorf("empty argv: %v", err)
	}
	if err := WriteConfig(filepath.Join(dir, "b"), Config{Argv: []string{"x"}}); err == nil || !strings.Contains(err.Error(), "status file") {
		t.Errorf("empty status file: %v", err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "c"), []byte("v1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "c"), []byte("v2"), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if b, _ := os.ReadFile(filepath.Join(dir, "c")); string(b) != "v2" || len(entries) != 1 {
		t.Errorf("atomic write left %q and %d entries", b, len(entries))
	}
}
