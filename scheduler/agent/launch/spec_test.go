package launch

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/agent/shim"
	"github.com/parityhpc/parity/vendors"
)

func validSpec() Spec {
	return Spec{JobID: 9, Name: "train", User: "alice", Script: "#!/bin/sh\ntrue\n", WorkDir: "/home/alice", Nodes: []string{"n1", "n2"}}
}

func TestSpecValidateNamesTheField(t *testing.T) {
	neg := -1
	cases := []struct {
		name   string
		mutate func(*Spec)
		want   string // substring of the error; "" means valid
	}{
		{"valid", func(*Spec) {}, ""},
		{"zero id", func(s *Spec) { s.JobID = 0 }, "jobId 0"},
		{"no script", func(s *Spec) { s.Script = "" }, "script is empty"},
		{"relative workdir", func(s *Spec) { s.WorkDir = "work" }, `workDir "work"`},
		{"negative memory", func(s *Spec) { s.MemoryBytes = -5 }, "memoryBytes -5"},
		{"negative limit", func(s *Spec) { s.TimeLimit = -time.Second }, "timeLimit -1s"},
		{"not the first node", func(s *Spec) { s.Nodes = []string{"n2", "n1"} }, `first node "n2"`},
		{"bad umask", func(s *Spec) { s.Umask = &neg }, "umask"},
		{"relative device file", func(s *Spec) {
			s.Prepared.DeviceFiles = []gres.DeviceFile{{Path: "dev/nvidia0", Major: 195}}
		}, "dev/nvidia0 (195:0)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := validSpec()
			c.mutate(&s)
			err := s.Validate("n1")
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("valid spec rejected: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one naming %q", err, c.want)
			}
		})
	}
}

func TestOutputPaths(t *testing.T) {
	cases := []struct {
		name             string
		mutate           func(*Spec)
		out, errPath, in string
	}{
		{"sbatch default", func(*Spec) {}, "/home/alice/slurm-9.out", "", ""},
		{"array default", func(s *Spec) { s.InArray, s.ArrayJobID, s.ArrayTaskID = true, 7, 3 }, "/home/alice/slurm-7_3.out", "", ""},
		{"tokens", func(s *Spec) { s.Output = "/scratch/%u/%x-%j-%N-%%.log" }, "/scratch/alice/train-9-n1-%.log", "", ""},
		{"array tokens", func(s *Spec) {
			s.InArray, s.ArrayJobID, s.ArrayTaskID = true, 7, 3
			s.Output, s.Error = "o-%A_%a", "e-%A_%a"
		}, "/home/alice/o-7_3", "/home/alice/e-7_3", ""},
		{"same file for both", func(s *Spec) { s.Output, s.Error = "x-%j", "x-%j" }, "/home/alice/x-9", "", ""},
		{"input relative", func(s *Spec) { s.Input = "in/%j.txt" }, "/home/alice/slurm-9.out", "", "/home/alice/in/9.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := validSpec()
			c.mutate(&s)
			out, errPath, in := s.OutputPaths("n1")
			if out != c.out || errPath != c.errPath || in != c.in {
				t.Errorf("OutputPaths = %q, %q, %q; want %q, %q, %q", out, errPath, in, c.out, c.errPath, c.in)
			}
		})
	}
}

func TestEnvironmentLayersControllerNodeAndVendor(t *testing.T) {
	s := validSpec()
	s.UID, s.GID = 1000, 100
	s.Env = map[string]string{"HOME": "/home/alice", "SLURM_JOB_NAME": "from-controller", "CUDA_VISIBLE_DEVICES": "stale"}
	s.AddPrepared(vendors.Prepared{Env: map[string]string{"CUDA_VISIBLE_DEVICES": "0,1"}})
	s.AddPrepared(vendors.Prepared{Env: map[string]string{"ROCR_VISIBLE_DEVICES": "GPU-x"}})
	env := s.Environment("n1", 8)
	want := map[string]string{
		"HOME": "/home/alice", "SLURM_JOB_NAME": "from-controller", "SLURM_JOB_ID": "9", "SLURM_JOBID": "9",
		"SLURMD_NODENAME": "n1", "SLURM_CPUS_ON_NODE": "8", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_NUM_NODES": "2",
		"SLURM_JOB_UID": "1000", "SLURM_JOB_GID": "100", "SLURM_NODEID": "0", "SLURM_PROCID": "0",
		"CUDA_VISIBLE_DEVICES": "0,1", "ROCR_VISIBLE_DEVICES": "GPU-x",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q, want %q", k, env[k], v)
		}
	}
	if _, ok := env["SLURM_ARRAY_TASK_ID"]; ok {
		t.Error("array variables set for a job outside an array")
	}
	list := envList(map[string]string{"B": "2", "A": "1", "BAD=KEY": "x", "": "y"})
	if strings.Join(list, " ") != "A=1 B=2" {
		t.Errorf("envList = %v, want sorted valid entries only", list)
	}
}

func TestClassify(t *testing.T) {
	started := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ended := started.Add(time.Hour)
	done := func(code, sig int) shim.Status {
		return shim.Status{Done: true, ExitCode: code, Signal: sig, Started: started, Ended: ended}
	}
	missing := &os.PathError{Op: "open", Path: "status.json", Err: os.ErrNotExist}
	cases := []struct {
		name   string
		ending accounting.JobState
		st     shim.Status
		stErr  error
		oom    uint64
		state  accounting.JobState
		exit   string
	}{
		{"clean exit", "", done(0, 0), nil, 0, accounting.StateCompleted, "0:0"},
		{"exit code", "", done(2, 0), nil, 0, accounting.StateFailed, "2:0"},
		{"signal", "", done(0, 11), nil, 0, accounting.StateFailed, "0:11"},
		{"oom kill of the script", "", done(0, 9), nil, 1, accounting.StateOutOfMemory, "0:9"},
		{"oom kill of a child, script exits 0", "", done(0, 0), nil, 2, accounting.StateOutOfMemory, "0:0"},
		{"cancel wins over the signal it caused", accounting.StateCancelled, done(0, 15), nil, 0, accounting.StateCancelled, "0:15"},
		{"timeout wins over oom", accounting.StateTimeout, done(0, 9), nil, 1, accounting.StateTimeout, "0:9"},
		{"timeout with a trap's exit code", accounting.StateTimeout, done(7, 0), nil, 0, accounting.StateTimeout, "7:0"},
		{"start error", "", shim.Status{Done: true, StartError: "join cgroup: EBUSY"}, nil, 0, accounting.StateFailed, "1:0"},
		{"supervisor lost", "", shim.Status{Pid: 4}, nil, 0, accounting.StateNodeFail, "0:0"},
		{"no status at all", "", shim.Status{}, missing, 0, accounting.StateNodeFail, "0:0"},
		{"lost while cancelling", accounting.StateCancelled, shim.Status{}, missing, 0, accounting.StateCancelled, "0:0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := Record{Spec: Spec{JobID: 3, TimeLimit: time.Minute}, Started: started, Ending: c.ending}
			end := classify(rec, c.st, c.stErr, c.oom, ended.Add(time.Minute))
			if end.State != c.state || end.ExitString() != c.exit {
				t.Errorf("classify = %s %s (%s), want %s %s", end.State, end.ExitString(), end.Reason, c.state, c.exit)
			}
			if end.State != accounting.StateCompleted && end.Reason == "" {
				t.Error("a non-completed end has no reason")
			}
			if !end.Start.Equal(started) {
				t.Errorf("start %v, want %v", end.Start, started)
			}
		})
	}
}

func TestTerminateRejectsNonFinalStatesAndUnknownJobs(t *testing.T) {
	e := &Runtime{jobs: map[uint64]*job{}}
	if err := e.Terminate(t.Context(), 1, accounting.StateRunning); err == nil || !strings.Contains(err.Error(), "RUNNING") {
		t.Errorf("Terminate with RUNNING: %v", err)
	}
	if err := e.Cancel(t.Context(), 1); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("Cancel of an unknown job: %v, want ErrUnknownJob", err)
	}
}

// A job of the agent's own user runs without an identity change whether
// the controller sent no groups or the ones the user database gives; any
// other identity needs one.
func TestCredentialOnlyWhenTheIdentityDiffers(t *testing.T) {
	uid, gid := uint32(os.Geteuid()), uint32(os.Getegid())
	own, err := os.Getgroups()
	if err != nil {
		t.Fatal(err)
	}
	mine := []uint32{gid}                // the primary group listed again, as the user database lists root's
	for i := len(own) - 1; i >= 0; i-- { // another order, and a repeat
		mine = append(mine, uint32(own[i]), uint32(own[i]))
	}
	r := &Runtime{}
	for _, tc := range []struct {
		name     string
		spec     Spec
		wantNone bool
	}{
		{"no groups sent", Spec{UID: uid, GID: gid}, true},
		{"the process's own groups", Spec{UID: uid, GID: gid, Groups: mine}, true},
		{"one group more", Spec{UID: uid, GID: gid, Groups: append(slices.Clone(mine), 4242)}, false},
		{"another gid", Spec{UID: uid, GID: gid + 1, Groups: mine}, false},
	} {
		c, err := r.credential(tc.spec)
		if (tc.wantNone && c != nil) || (!tc.wantNone && c == nil && err == nil) {
			t.Errorf("%s: credential %+v (%v), want none: %v", tc.name, c, err, tc.wantNone)
		}
	}
}
