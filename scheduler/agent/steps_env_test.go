package agent

import (
	"maps"
	"testing"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/topology"
)

func TestStepEnv(t *testing.T) {
	inv := gres.Inventory{Devices: []gres.Device{{UUID: "GPU-a", Index: 0}, {UUID: "GPU-b", Index: 3}}}
	so := &pb.StepOrder{JobId: 12, StepId: 2, StepNodes: []string{"n1", "n2"}, NodeIndex: 1, FirstTask: 3, Tasks: 2, TotalTasks: 5,
		TasksPerNode: []int32{3, 2}, Devices: []string{"GPU-b"},
		Step: &pb.StepRequest{CpusPerTask: 2},
		Job: &pb.Job{Id: 12, User: "alice", Partition: "gpu", Account: "phys", Spec: &pb.JobSpec{Name: "train", Workdir: "/home/alice"},
			Alloc: []*pb.NodeAlloc{{Node: "n1"}, {Node: "n2"}, {Node: "n3"}}}}
	got := stepEnv(so, "n2", topology.NewCPUSet(4, 5, 6, 7), inv)
	want := map[string]string{
		"SLURM_JOB_ID": "12", "SLURM_JOBID": "12", "SLURM_STEP_ID": "2", "SLURM_STEPID": "2", "SLURM_JOB_NAME": "train",
		"SLURM_JOB_USER": "alice", "SLURM_JOB_PARTITION": "gpu", "SLURM_JOB_ACCOUNT": "phys", "SLURMD_NODENAME": "n2",
		"SLURM_JOB_NODELIST": "n[1-3]", "SLURM_JOB_NUM_NODES": "3", "SLURM_STEP_NODELIST": "n[1-2]", "SLURM_NODELIST": "n[1-2]",
		"SLURM_STEP_NUM_NODES": "2", "SLURM_NNODES": "2", "SLURM_NTASKS": "5", "SLURM_NPROCS": "5", "SLURM_STEP_NUM_TASKS": "5",
		"SLURM_STEP_TASKS_PER_NODE": "3,2", "SLURM_TASKS_PER_NODE": "3,2", "SLURM_NODEID": "1", "SLURM_CPUS_ON_NODE": "4",
		"SLURM_CPUS_PER_TASK": "2", "SLURM_SUBMIT_DIR": "/home/alice", "SLURM_STEP_GPUS": "3", "SLURM_GPUS_ON_NODE": "1",
	}
	if !maps.Equal(got, want) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected %s=%q", k, v)
			}
		}
	}
}

func TestHeldJobsReportedOnce(t *testing.T) {
	s := &stepState{held: map[uint64]int32{}}
	s.hold(4, 0, true)
	s.hold(2, 1, true)
	s.hold(2, 0, false) // letting an earlier run go keeps run 1 held
	s.hold(9, 0, true)
	s.hold(9, 0, false)
	got := s.heldJobs([]*pb.RunningJob{{JobId: 4, Pid: 10}})
	if len(got) != 1 || got[0].GetJobId() != 2 || got[0].GetRun() != 1 {
		t.Errorf("held jobs besides the running ones: %v, want only job 2, run 1", got)
	}
}
