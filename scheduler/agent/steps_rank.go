package agent

import (
	"strconv"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// masterPortBase and masterPortSpan derive a step's MASTER_PORT from its
// job id, as the common sbatch recipe for torch does (10000 + the id's
// last four digits), so two jobs sharing a first node rarely collide.
const (
	masterPortBase = 10000
	masterPortSpan = 10000
)

// rankEnv is what torch.distributed's env:// rendezvous (and torchrun's
// children) read of task local on this node: its global rank and world
// size, its rank and count on the node, and where rank 0 listens. Slurm
// leaves these to the job script; a Parity step sets them from the same
// facts as SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID, so `srun python
// train.py` needs no wrapper. MASTER_ADDR and MASTER_PORT the caller
// exported are kept (a script that picked its own rendezvous wins).
func rankEnv(so *pb.StepOrder, local uint32, callerEnv map[string]string) map[string]string {
	rank := so.GetFirstTask() + local
	v := map[string]string{
		"RANK":             strconv.FormatUint(uint64(rank), 10),
		"WORLD_SIZE":       strconv.Itoa(int(so.GetTotalTasks())),
		"LOCAL_RANK":       strconv.FormatUint(uint64(local), 10),
		"LOCAL_WORLD_SIZE": strconv.FormatUint(uint64(so.GetTasks()), 10),
		"GROUP_RANK":       strconv.FormatUint(uint64(so.GetNodeIndex()), 10),
	}
	if _, ok := callerEnv["MASTER_ADDR"]; !ok && len(so.GetStepNodes()) > 0 {
		v["MASTER_ADDR"] = so.GetStepNodes()[0]
	}
	if _, ok := callerEnv["MASTER_PORT"]; !ok {
		v["MASTER_PORT"] = strconv.FormatUint(masterPortBase+so.GetJobId()%masterPortSpan, 10)
	}
	return v
}
