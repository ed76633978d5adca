package shim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const shimArg = "__parity_shim__"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == shimArg {
		os.Exit(Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// runShim has a supervisor of its own, started as the agent starts one,
// run cfg and returns the status it recorded and the job's output with
// the supervisor's log.
func runShim(t *testing.T, cfg Config) (Status, string) {
	t.Helper()
	dir := t.TempDir()
	cfg.StatusFile = filepath.Join(dir, "status.json")
	if cfg.JobID == "" {
		cfg.JobID = "job"
	}
	if cfg.Stdout == "" {
		cfg.Stdout = filepath.Join(dir, "out")
	}
	if cfg.Dir == "" {
		cfg.Dir = dir
	}
	if cfg.Env == nil {
		cfg.Env = []string{"PATH=/usr/bin:/bin"}
	}
	ended := make(chan string, 1)
	c := connect(t, dir, func(id string) { ended <- id })
	pid, startErr, err := c.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	select {
	case id := <-ended:
		if id != cfg.JobID {
			t.Fatalf("ended event for job %q, want %q", id, cfg.JobID)
		}
	case <-time.After(time.Minute):
		t.Fatalf("job %s (pid %d, start error %q) did not end", cfg.JobID, pid, startErr)
	}
	st, err := ReadStatus(cfg.StatusFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pid != pid || st.StartError != startErr {
		t.Errorf("status pid %d, start error %q; the start answered %d, %q", st.Pid, st.StartError, pid, startErr)
	}
	out, _ := os.ReadFile(cfg.Stdout)
	log, _ := os.ReadFile(filepath.Join(dir, "shim.log"))
	return st, string(out) + string(log)
}

// connect starts a supervisor for dir and connects to it; the connection
// is closed when the test ends (and the idle supervisor leaves).
func connect(t *testing.T, dir string, onEnded func(string)) *Client {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(filepath.Join(dir, "shim.sock"), []string{exe, shimArg}, filepath.Join(dir, "shim.log"), onEnded)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
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
			if !st.Done || st.ExitCode != c.code || st.Signal != c.signal || st.StartError != "" {
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

func TestStartRejectsIncompleteConfigs(t *testing.T) {
	dir := t.TempDir()
	c := connect(t, dir, nil)
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Argv: []string{"x"}, StatusFile: "s"}, "job id"},
		{Config{JobID: "1", StatusFile: "s"}, "argv"},
		{Config{JobID: "1", Argv: []string{"x"}}, "status file"},
	}
	for _, tc := range cases {
		if _, _, err := c.Start(context.Background(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%+v) = %v, want an error naming %s", tc.cfg, err, tc.want)
		}
	}
	if err := WriteFileAtomic(filepath.Join(dir, "c"), []byte("v1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "c"), []byte("v2"), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "c")); string(b) != "v2" || strings.Contains(strings.Join(names, " "), ".tmp") {
		t.Errorf("atomic write left %q and %q", b, names)
	}
}
