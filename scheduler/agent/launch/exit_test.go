package launch

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/parityhpc/parity/scheduler/accounting"
)

func TestExitStatesAreExact(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	cases := []struct {
		name   string
		script string
		state  accounting.JobState
		exit   string
	}{
		{"zero exit completes", "echo hello", accounting.StateCompleted, "0:0"},
		{"non-zero exit fails with its code", "exit 3", accounting.StateFailed, "3:0"},
		{"exit 255", "exit 255", accounting.StateFailed, "255:0"},
		{"killed by a signal fails with the signal", "kill -KILL $$", accounting.StateFailed, "0:9"},
		{"segfault-style abort", "kill -ABRT $$", accounting.StateFailed, "0:6"},
		{"missing command is 127", "exec /nonexistent/command", accounting.StateFailed, "127:0"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := uint64(100 + i)
			e.launch(e.spec(id, c.script))
			end := e.waitEnd()
			if end.JobID != id {
				t.Fatalf("end of job %d, want %d", end.JobID, id)
			}
			if end.State != c.state || end.ExitString() != c.exit {
				t.Errorf("job %q ended %s %s (%s), want %s %s", c.script, end.State, end.ExitString(), end.Reason, c.state, c.exit)
			}
			if !end.Isolated {
				t.Error("job ran without isolation although cgroups are available")
			}
			if err := e.rt.Forget(id); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestJobRunsAsUserWithOutputPatternsAndEnvironment(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	s := e.spec(7, `echo "id=$(id -u):$(id -g) pwd=$(pwd)"
echo "job=$SLURM_JOB_ID name=$SLURM_JOB_NAME node=$SLURMD_NODENAME cpus=$SLURM_CPUS_ON_NODE"
echo "cuda=$CUDA_VISIBLE_DEVICES rocr=$ROCR_VISIBLE_DEVICES ordinal=$GPU_DEVICE_ORDINAL keep=$KEEP"
echo to-stderr >&2
touch made-by-job
`)
	s.Name = "train"
	s.Output = "%x-%j-%u-%N-%%.out"
	s.Error = "err/%j.err"
	if err := os.Mkdir(filepath.Join(e.work, "err"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(e.work, "err"), 0o777)
	s.Env["KEEP"] = "from-submit"
	s.Env["CUDA_VISIBLE_DEVICES"] = "overridden-by-driver"
	s.Prepared.Env = map[string]string{"CUDA_VISIBLE_DEVICES": "2", "ROCR_VISIBLE_DEVICES": "GPU-abc", "GPU_DEVICE_ORDINAL": "2"}
	s.CPUs = mustCPUs(t, "0")
	e.launch(s)
	end := e.waitEnd()
	if end.State != accounting.StateCompleted {
		t.Fatalf("job ended %s %s: %s", end.State, end.ExitString(), end.Reason)
	}
	out := filepath.Join(e.work, "train-7-nobody-n1-%.out")
	got := readFile(t, out)
	for _, want := range []string{
		"id=65534:65534 pwd=" + e.work,
		"job=7 name=train node=n1 cpus=1",
		"cuda=2 rocr=GPU-abc ordinal=2 keep=from-submit",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output %s lacks %q:\n%s", out, want, got)
		}
	}
	if strings.Contains(got, "to-stderr") {
		t.Errorf("stderr went to the output file")
	}
	if errOut := readFile(t, filepath.Join(e.work, "err", "7.err")); strings.TrimSpace(errOut) != "to-stderr" {
		t.Errorf("error file holds %q, want to-stderr", errOut)
	}
	for _, f := range []string{out, filepath.Join(e.work, "err", "7.err"), filepath.Join(e.work, "made-by-job")} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if sys.Uid != nobodyUID || sys.Gid != nobodyGID {
			t.Errorf("%s is owned by %d:%d, want the job's user %d:%d", f, sys.Uid, sys.Gid, nobodyUID, nobodyGID)
		}
	}
}
