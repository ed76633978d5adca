package shim

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestShimStartsUsualJobsDirectly: a job with a working directory it may
// enter and regular output files is started without the stage-2 shell,
// and looks to itself exactly as one started through the shell.
func TestShimStartsUsualJobsDirectly(t *testing.T) {
	dir := t.TempDir()
	errFile := filepath.Join(dir, "err")
	st, out := runShim(t, Config{JobID: "5", Argv: []string{script(t, `pwd; echo "bash_env=$BASH_ENV x=$X"; echo oops >&2; umask; exit 7`)},
		Dir: dir, Env: []string{"PATH=/usr/bin:/bin", "BASH_ENV=/etc/be", "X=1"}, Stderr: errFile, Umask: 0o027})
	if st.Start != StartDirect || st.ExitCode != 7 || st.StartError != "" {
		t.Fatalf("status %+v, want a direct start and exit 7: %s", st, out)
	}
	for _, want := range []string{dir + "\n", "bash_env=/etc/be x=1\n", "0027\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("job output lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(errFile); string(b) != "oops\n" {
		t.Errorf("stderr file: %q", b)
	}
	// Its descriptors, on either path: TestJobsStartWithOnlyTheirStandardDescriptors.
}

// TestShimFallsBackToTheShellForUnusualPaths: what the direct path does
// not handle goes through the stage-2 shell, which opens it inside the
// job's group as the user.
func TestShimFallsBackToTheShellForUnusualPaths(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to make a device node")
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "target"), link); err != nil {
		t.Fatal(err)
	}
	gpu := filepath.Join(dir, "nvidia5")
	if err := unix.Mknod(gpu, unix.S_IFCHR|0o666, int(unix.Mkdev(195, 5))); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		cfg    Config
		start  string
		output string // a file that must hold the job's output
	}{
		{"plain", Config{Stdout: filepath.Join(dir, "plain")}, StartDirect, filepath.Join(dir, "plain")},
		{"dev null", Config{Stdout: os.DevNull}, StartDirect, ""},
		{"symlinked output", Config{Stdout: link}, StartShell, filepath.Join(dir, "target")},
		// The shell opens it as the user (in the job's group, where the
		// allow-list decides); with no driver behind it, ENXIO ends the job.
		{"device output", Config{Stdout: filepath.Join(dir, "out"), Stderr: gpu}, StartShell, ""},
		{"command through PATH", Config{Argv: []string{"sh", "-c", "echo hi"}, Stdout: filepath.Join(dir, "path")}, StartShell, filepath.Join(dir, "path")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.cfg.Argv == nil {
				c.cfg.Argv = []string{script(t, "echo hi")}
			}
			st, out := runShim(t, c.cfg)
			if st.Start != c.start || (st.ExitCode != 0) != (c.cfg.Stderr == gpu) {
				t.Errorf("status %+v, want start %q: %s", st, c.start, out)
			}
			if c.output != "" {
				if b, _ := os.ReadFile(c.output); string(b) != "hi\n" {
					t.Errorf("output in %s: %q", c.output, b)
				}
			}
		})
	}
}

// TestShimOpensOutputAsTheJobsUser: the direct path's files are created
// by and checked for the job's user, never with the shim's root powers.
func TestShimOpensOutputAsTheJobsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to run a job as another user")
	}
	const nobody = 65534
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755) // t.TempDir's parent is private
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	closed := filepath.Join(dir, "closed")
	if err := os.Mkdir(closed, 0o755); err != nil {
		t.Fatal(err)
	}
	cred := &Credential{UID: nobody, GID: nobody}
	body := "id -u; echo hi"
	sc := script(t, body)
	os.Chmod(filepath.Dir(sc), 0o755)

	st, _ := runShim(t, Config{JobID: "6", Argv: []string{sc}, Credential: cred, Dir: open, Stdout: filepath.Join(open, "out")})
	if st.Start != StartDirect || st.ExitCode != 0 {
		t.Fatalf("status %+v, want a direct start", st)
	}
	var fi syscall.Stat_t
	if err := syscall.Stat(filepath.Join(open, "out"), &fi); err != nil || fi.Uid != nobody {
		t.Errorf("output owner %d (%v), want %d", fi.Uid, err, nobody)
	}
	if b, _ := os.ReadFile(filepath.Join(open, "out")); string(b) != "65534\nhi\n" {
		t.Errorf("output %q", b)
	}
	// An existing file of theirs, appended to: reopened through the
	// checked handle, still as the user.
	st, _ = runShim(t, Config{JobID: "8", Argv: []string{sc}, Credential: cred, Dir: open, Stdout: filepath.Join(open, "out"), Append: true})
	if b, _ := os.ReadFile(filepath.Join(open, "out")); st.Start != StartDirect || string(b) != "65534\nhi\n65534\nhi\n" {
		t.Errorf("append: status %+v, output %q", st, b)
	}
	// A file of root's that the user may not write: refused to the user,
	// so the shell tries (and fails) as the user.
	rootFile := filepath.Join(open, "root-owned")
	if err := os.WriteFile(rootFile, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ = runShim(t, Config{JobID: "9", Argv: []string{sc}, Credential: cred, Dir: open, Stdout: rootFile})
	if b, _ := os.ReadFile(rootFile); st.Start != StartShell || st.ExitCode == 0 || string(b) != "keep\n" {
		t.Errorf("root's file: status %+v, content %q", st, b)
	}
	// A directory the user may not write: the shim must not create the
	// file for them; the shell then fails to, as the user.
	st, _ = runShim(t, Config{JobID: "7", Argv: []string{sc}, Credential: cred, Dir: open, Stdout: filepath.Join(closed, "out")})
	if st.Start != StartShell || st.ExitCode == 0 {
		t.Errorf("status %+v, want the shell's failure", st)
	}
	if _, err := os.Stat(filepath.Join(closed, "out")); !os.IsNotExist(err) {
		t.Errorf("output created where the user may not write (%v)", err)
	}
}

// TestShimJobsShareTheSupervisorsDevNull: /dev/null as stdin and stdout
// is the supervisor's own descriptor, and behaves as /dev/null opened by
// the job would: reads end at once and writes succeed.
func TestShimJobsShareTheSupervisorsDevNull(t *testing.T) {
	dir := t.TempDir()
	errFile := filepath.Join(dir, "err")
	job := script(t, `echo discarded || echo "write failed" >&2
read line; echo "read=$?" >&2`)
	st, out := runShim(t, Config{Argv: []string{job}, Dir: dir, Stdout: os.DevNull, Stderr: errFile})
	b, _ := os.ReadFile(errFile)
	if st.Start != StartDirect || st.ExitCode != 0 || string(b) != "read=1\n" {
		t.Errorf("status %+v, stderr %q, want a direct start, exit 0, an empty read and no failed write: %s", st, b, out)
	}
}
