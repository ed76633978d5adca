package controller

import (
	"context"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// noQOSCluster is the Slurm anchor's shape: no QOS and no accounts, as
// slurm.conf with AccountingStorageType=accounting_storage/none.
const noQOSCluster = `
cluster: anchor
admins: [root]
partitions:
  - name: gpu
    nodes: n[1-2]
nodes:
  - names: n[1-2]
    gpus: 8
    gpuType: h100
heartbeatInterval: 10s
nodeDownTimeout: 1m
eventRetention: 1h
minJobAge: 10m
`

// On the Slurm 22.05 anchor without accounting, `sbatch --hold --parsable
// --qos=foo j.sh` and `--qos=normal` each printed a job id (rc 0) and
// scontrol showed QOS=(null): --qos is ignored when no QOS is defined.
func TestSubmitIgnoresQOSWhenNoneDefined(t *testing.T) {
	h := startController(t, noQOSCluster)
	h.register("n1", 8)
	alice := h.as("alice", auth.RoleUser)
	for _, qos := range []string{"foo", "normal", "high,low"} {
		id := h.submit(alice, &pb.JobSpec{Name: "q", Qos: qos, Hold: true, Script: "#!/bin/sh\n"})
		if got := h.job(id).GetQos(); got != "normal" {
			t.Errorf("--qos=%s: job has QOS %q, want the default normal", qos, got)
		}
	}
	if _, err := h.as("bob", auth.RoleUser).Submit(context.Background(), &pb.JobSpec{Qos: "foo", Script: "#!/bin/sh\n"}); err != nil {
		t.Errorf("--qos=foo without --hold: %v; Slurm accepts it too", err)
	}
}
