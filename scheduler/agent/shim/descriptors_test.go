package shim

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// listFDs is a job that prints the descriptors it was started with: the
// shell lists its own (no script file of its own is open, and the last
// builtin keeps it from exec'ing ls in its place), what each one is too.
var listFDs = []string{"/bin/sh", "-c", "ls -l /proc/$$/fd; :"}

// heldFDs reads listFDs' output: the descriptor numbers, sorted.
func heldFDs(listing string) []string {
	var fds []string
	for _, line := range strings.Split(listing, "\n") {
		if before, _, ok := strings.Cut(line, " -> "); ok {
			f := strings.Fields(before)
			fds = append(fds, f[len(f)-1])
		}
	}
	slices.Sort(fds)
	return fds
}

// strayDescriptors opens, in the test process, descriptors without
// close-on-exec as an agent inherits them from the shell that started it
// (a file and both ends of a pipe); they are closed when the test ends.
func strayDescriptors(t *testing.T) []int {
	t.Helper()
	fd, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // pipe2 without O_CLOEXEC
		t.Fatal(err)
	}
	fds := []int{fd, p[0], p[1]}
	t.Cleanup(func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	})
	return fds
}

// TestJobsStartWithOnlyTheirStandardDescriptors: whatever the supervisor
// holds without close-on-exec (inherited from the agent, or from whoever
// started it without sealing its own), and however many jobs start at
// once, on either path, each job holds exactly 0, 1 and 2.
func TestJobsStartWithOnlyTheirStandardDescriptors(t *testing.T) {
	for _, c := range []struct {
		name    string
		connect func(t *testing.T, dir string, onEnded func(string)) *Client
	}{
		{"started by Connect", func(t *testing.T, dir string, onEnded func(string)) *Client {
			strays := strayDescriptors(t)
			c := connect(t, dir, onEnded)
			// The supervisor itself is started without them: it may
			// live for months, and would keep the pipe open as long.
			// (The pipe, by its inode: /dev/null's is everyone's.)
			if held := heldOf(t, c.Pid(), strays[1:]); len(held) > 0 {
				t.Errorf("the supervisor holds the agent's stray pipe as descriptors %v", held)
			}
			return c
		}},
		{"started with stray descriptors", connectWithStrays},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			const jobs = 8
			ended := make(chan string, jobs)
			cl := c.connect(t, dir, func(id string) { ended <- id })
			var wg sync.WaitGroup
			cfgs := make([]Config, jobs)
			errs := make([]error, jobs)
			for i := range cfgs {
				cfgs[i] = Config{JobID: fmt.Sprint(i), Argv: listFDs, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"},
					StatusFile: filepath.Join(dir, fmt.Sprintf("status%d.json", i)),
					Stdout:     filepath.Join(dir, fmt.Sprintf("out%d", i)), Stderr: filepath.Join(dir, fmt.Sprintf("err%d", i))}
				if i%2 == 1 {
					cfgs[i].Dir = "/nonexistent" // through the stage-2 shell
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _, errs[i] = cl.Start(context.Background(), cfgs[i])
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("start job %d: %v", i, err)
				}
			}
			for range jobs {
				select {
				case <-ended:
				case <-time.After(time.Minute):
					t.Fatal("not every job ended within a minute")
				}
			}
			for i, cfg := range cfgs {
				st, err := ReadStatus(cfg.StatusFile)
				if err != nil {
					t.Fatal(err)
				}
				out, _ := os.ReadFile(cfg.Stdout)
				fds := heldFDs(string(out))
				if want := map[bool]string{false: StartDirect, true: StartShell}[i%2 == 1]; st.Start != want || st.ExitCode != 0 || !slices.Equal(fds, []string{"0", "1", "2"}) {
					t.Errorf("job %d (%s start, exit %d) held descriptors %v, want a %s start holding [0 1 2]:\n%s", i, st.Start, st.ExitCode, fds, want, out)
				}
			}
		})
	}
}

// connectWithStrays starts a supervisor for dir as spawn does but without
// sealing the starter's descriptors: it inherits a stray one at 4, next to
// its socket at 3, and connects to it.
func connectWithStrays(t *testing.T, dir string, onEnded func(string)) *Client {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "shim.sock")
	ln, err := listenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	lf, err := ln.File()
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	// Any file passed this way is, in the supervisor, a descriptor
	// without close-on-exec, as an inherited one is.
	stray, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer stray.Close()
	logf, err := os.Create(filepath.Join(dir, "shim.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(exe, shimArg, "serve")
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = logf, logf, []*os.File{lf, stray}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Wait() }) // after the client's close, registered below
	conn, err := dialUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	c, err := greet(conn, onEnded)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// heldOf returns the descriptors of process pid that are open files of
// the test process's fds (the same inode on the same device).
func heldOf(t *testing.T, pid int, fds []int) []string {
	t.Helper()
	type key struct{ dev, ino uint64 }
	ours := map[key]bool{}
	for _, fd := range fds {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			t.Fatal(err)
		}
		ours[key{st.Dev, st.Ino}] = true
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, n := range names {
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(dir, n.Name()), &st) == nil && ours[key{st.Dev, st.Ino}] {
			held = append(held, n.Name())
		}
	}
	return held
}
