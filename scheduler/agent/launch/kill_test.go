package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

func TestMemoryLimitEndsJobAsOutOfMemory(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	cases := []struct {
		name   string
		script string
		state  accounting.JobState
	}{
		// tail keeps a line-less stream in memory: 200 MiB against 32 MiB.
		{"allocation over the limit", "head -c 200m /dev/zero | tail\n", accounting.StateOutOfMemory},
		{"allocation under the limit", "head -c 8m /dev/zero | tail >/dev/null\n", accounting.StateCompleted},
		// The OOM victim is a child; the script carries on and exits 0, and
		// the job is still OUT_OF_MEMORY, as in Slurm.
		{"script survives its child's oom kill", "head -c 200m /dev/zero | tail\nexit 0\n", accounting.StateOutOfMemory},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := e.spec(uint64(200+i), c.script)
			s.MemoryBytes = 32 << 20
			e.launch(s)
			end := e.waitEnd()
			if end.State != c.state {
				t.Fatalf("job ended %s %s (%s), want %s", end.State, end.ExitString(), end.Reason, c.state)
			}
			if c.state == accounting.StateOutOfMemory && end.Usage.OOMKills == 0 {
				t.Errorf("OUT_OF_MEMORY without an oom kill counted: %+v", end.Usage)
			}
			if end.Usage.MemoryPeakBytes == 0 || end.Usage.MemoryPeakBytes > 32<<20 {
				t.Errorf("memory peak %d bytes, want within (0, 32 MiB]", end.Usage.MemoryPeakBytes)
			}
		})
	}
}

// treeScript leaves processes every way a job can: a background child, a
// double-forked orphan and a setsid'ed daemon, all ignoring SIGTERM, and
// reports their pids before saying it is ready.
const treeScript = `trap '' TERM
sleep 1001 & echo $! >> "$W/pids"
( sleep 1002 & echo $! >> "$W/pids" ) &
setsid sleep 1003 & echo $! >> "$W/pids"
wait_for_pids() { while [ "$(wc -l < "$W/pids")" -lt 3 ]; do :; done; }
wait_for_pids
echo ready > "$W/ready"
while :; do sleep 1000 & wait $!; done
`

func TestCancelKillsTheWholeTree(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	ready := e.fifo("ready")
	s := e.spec(300, treeScript)
	s.Env["W"] = e.work
	e.launch(s)
	if got := e.readLine(ready); got != "ready" {
		t.Fatalf("job said %q", got)
	}
	pids := readPids(t, filepath.Join(e.work, "pids"))
	if err := e.rt.Cancel(context.Background(), 300); err != nil {
		t.Fatal(err)
	}
	// Everything ignores SIGTERM: only the SIGKILL after KillWait ends it.
	if n := e.clock.Advance(e.cfg.KillWait); n != 1 {
		t.Fatalf("%d timers fired at KillWait, want the SIGKILL one", n)
	}
	end := e.waitEnd()
	if end.State != accounting.StateCancelled || end.ExitString() != "0:9" {
		t.Errorf("cancelled job ended %s %s (%s), want CANCELLED 0:9", end.State, end.ExitString(), end.Reason)
	}
	assertGone(t, pids)
	assertNoGroup(t, e, 300)
}

func TestTimeLimitSignalsAheadThenTimesOut(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	ready, usr1 := e.fifo("ready"), e.fifo("usr1")
	s := e.spec(301, `trap 'echo usr1 > "$W/usr1"' USR1
trap 'exit 7' TERM
echo ready > "$W/ready"
while :; do sleep 1000 & wait $!; done
`)
	s.Env["W"] = e.work
	s.TimeLimit = 10 * time.Minute
	sig, err := jobspec.ParseSignal("B:USR1@60")
	if err != nil {
		t.Fatal(err)
	}
	s.Signal = &sig
	e.launch(s)
	if got := e.readLine(ready); got != "ready" {
		t.Fatalf("job said %q", got)
	}
	if n := e.clock.Advance(9*time.Minute - time.Second); n != 0 {
		t.Fatalf("%d timers fired before --signal was due", n)
	}
	e.clock.Advance(time.Second)
	if got := e.readLine(usr1); got != "usr1" {
		t.Fatalf("job's USR1 trap wrote %q", got)
	}
	e.clock.Advance(time.Minute)
	end := e.waitEnd()
	if end.State != accounting.StateTimeout || end.ExitString() != "7:0" {
		t.Errorf("job ended %s %s (%s), want TIMEOUT 7:0 (its TERM trap exits 7)", end.State, end.ExitString(), end.Reason)
	}
	assertNoGroup(t, e, 301)
}

func TestSignalReachesEveryProcessWithoutEndingTheJob(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	ready, hup := e.fifo("ready"), e.fifo("hup")
	s := e.spec(302, `trap 'echo hup > "$W/hup"; exit 0' HUP
echo ready > "$W/ready"
while :; do sleep 1000 & wait $!; done
`)
	s.Env["W"] = e.work
	e.launch(s)
	e.readLine(ready)
	if err := e.rt.Signal(context.Background(), 302, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if got := e.readLine(hup); got != "hup" {
		t.Fatalf("job's HUP trap wrote %q", got)
	}
	if end := e.waitEnd(); end.State != accounting.StateCompleted {
		t.Errorf("job ended %s %s after handling SIGHUP and exiting 0, want COMPLETED", end.State, end.ExitString())
	}
	if err := e.rt.Signal(context.Background(), 302, syscall.SIGHUP); err == nil {
		t.Error("signalling an ended job succeeded")
	}
}

func readPids(t *testing.T, path string) []int {
	t.Helper()
	var pids []int
	for _, f := range strings.Fields(readFile(t, path)) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, p)
	}
	if len(pids) != 3 {
		t.Fatalf("job reported pids %v, want 3", pids)
	}
	return pids
}

// assertGone fails for any pid still running (a zombie has ended).
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	for _, p := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 0 && fields[0] != "Z" {
			t.Errorf("process %d survived the job (state %s): %s", p, fields[0], b)
		}
	}
}

// assertNoGroup fails if the job's cgroup directories remain.
func assertNoGroup(t *testing.T, e *env, id uint64) {
	t.Helper()
	for _, base := range cgroupBases() {
		dir := filepath.Join(base, e.rt.groupPath(id))
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("job group %s remains", dir)
		}
	}
}
