package controller

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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

// On the Slurm 22.05 anchor without accounting, a job submitted with no
// --account and no --qos showed Account=(null) QOS=(null), --account=foo
// showed Account=foo and --qos=high QOS=(null); with slurmdbd (a user with
// a default account) the defaults showed, Account=root QOS=normal. The
// spec keeps what such a cluster would show, while the job is charged
// internally to the default account and QOS as before.
func TestSubmitKeepsDefaultedAccountAndQOSOutOfSpec(t *testing.T) {
	tests := []struct {
		name, cluster, account, qos        string
		specAccount, specQOS, acct, jobQOS string
	}{
		{"no accounting, defaulted", noQOSCluster, "", "", "", "", "default", "normal"},
		{"no accounting, asked for", noQOSCluster, "foo", "high", "foo", "", "foo", "normal"},
		{"accounting, defaulted", testCluster, "", "", "bio", "normal", "bio", "normal"},
		// Accounts without QOS of its own: --qos is still ignored, and the
		// default shown as slurmdbd's Slurm shows it.
		{"accounts only", noQOSCluster + "accounts:\n  - name: bio\n    users: [carol]\n", "", "high", "bio", "normal", "bio", "normal"},
		{"QOS only", noQOSCluster + "qos:\n  - name: high\n", "", "", "default", "normal", "default", "normal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startController(t, tc.cluster)
			carol := h.as("carol", auth.RoleUser)
			id := h.submit(carol, &pb.JobSpec{Name: "a", Partition: "gpu", Account: tc.account, Qos: tc.qos, Hold: true, Script: "#!/bin/sh\n"})
			j, err := h.as("root", auth.RoleAdmin).GetJob(context.Background(), id, false)
			if err != nil {
				t.Fatal(err)
			}
			s := j.GetSpec()
			if s.GetAccount() != tc.specAccount || s.GetQos() != tc.specQOS || j.GetAccount() != tc.acct || j.GetQos() != tc.jobQOS {
				t.Errorf("spec account %q qos %q, job account %q qos %q; want %q %q, %q %q", s.GetAccount(), s.GetQos(),
					j.GetAccount(), j.GetQos(), tc.specAccount, tc.specQOS, tc.acct, tc.jobQOS)
			}
		})
	}
}

// A held job no node can run is accepted and, once released, pends with
// Reason=BadConstraints; unheld, it is refused. On the Slurm 22.05 anchor
// (nodes of 16 CPUs, 64000 MB, 8 h100): `sbatch --hold --parsable <opt>
// j.sh` printed a job id (rc 0), Reason=JobHeldUser, and after `scontrol
// release` Reason=BadConstraints; without --hold each was rc 1 "Batch job
// submission failed: Requested node configuration is not available"
// (--mem and -c first print "Memory specification can not be satisfied"
// and "CPU count per node can not be satisfied").
func TestSubmitHeldJobNoNodeCanRun(t *testing.T) {
	h := startController(t, noQOSCluster)
	h.register("n1", 8)
	h.register("n2", 8)
	alice := h.as("alice", auth.RoleUser)
	gpus := func(n int64, typ string) *pb.GRESRequest {
		return &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Type: typ, Count: n}}}
	}
	cases := []struct {
		name string
		spec *pb.JobSpec
	}{
		{"--gres=gpu:a100:1", &pb.JobSpec{Gres: gpus(1, "a100"), GresOption: "gpu:a100:1"}},
		{"--gres=gpu:9", &pb.JobSpec{Gres: gpus(9, ""), GresOption: "gpu:9"}},
		{"--gpus=33", &pb.JobSpec{GpusOption: "33", Gres: &pb.GRESRequest{PerJob: []*pb.GRESTerm{{Name: "gpu", Count: 33}}}}},
		{"--mem=100G", &pb.JobSpec{MemPerNodeMb: 100 << 10}},
		{"-c 32", &pb.JobSpec{CpusPerTask: 32}},
		{"--ntasks-per-node=32", &pb.JobSpec{NtasksPerNode: 32}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Script = "#!/bin/sh\n"
			if _, err := alice.Submit(context.Background(), tc.spec); status.Code(err) != codes.InvalidArgument ||
				!strings.Contains(err.Error(), "requested node configuration is not available") {
				t.Fatalf("unheld %s: %v; Slurm refuses it: Requested node configuration is not available", tc.name, err)
			}
			tc.spec.Hold = true
			id := h.submit(alice, tc.spec)
			if _, err := alice.ReleaseJob(context.Background(), id); err != nil {
				t.Fatal(err)
			}
			h.pass()
			if j := h.job(id); j.GetState() != StatePending || j.GetReason() != "BadConstraints" {
				t.Fatalf("held %s, released: %s/%s, want PENDING/BadConstraints", tc.name, j.GetState(), j.GetReason())
			}
		})
	}
}

// A CPU-per-node refusal names the option that asked: the anchor refused
// `sbatch --ntasks-per-node=32 j.sh` with "CPU count per node can not be
// satisfied" though the script never set --cpus-per-task, so blaming
// "--cpus-per-task=1" (the default) pointed at the wrong line.
func TestSubmitCPUsPerNodeNamesTheOption(t *testing.T) {
	h := startController(t, noQOSCluster)
	h.register("n1", 8)
	alice := h.as("alice", auth.RoleUser)
	cases := []struct {
		spec *pb.JobSpec
		want string
	}{
		{&pb.JobSpec{NtasksPerNode: 32}, "--ntasks-per-node=32: "},
		{&pb.JobSpec{NtasksPerNode: 32, CpusPerTask: 1}, "--ntasks-per-node=32: "},
		{&pb.JobSpec{Ntasks: 32, Nodes: 1}, "--ntasks=32: "},
		{&pb.JobSpec{NtasksPerNode: 4, CpusPerTask: 8}, "--ntasks-per-node=4 --cpus-per-task=8: "},
		{&pb.JobSpec{CpusPerTask: 32}, "--cpus-per-task=32: "},
	}
	for _, tc := range cases {
		tc.spec.Script = "#!/bin/sh\n"
		_, err := alice.Submit(context.Background(), tc.spec)
		msg := status.Convert(err).Message()
		if !strings.HasPrefix(msg, tc.want) || !strings.Contains(msg, "CPUs per node asked") || strings.Contains(msg, "--cpus-per-task=1:") {
			t.Errorf("%+v: %q, want it to start %q", tc.spec, msg, tc.want)
		}
	}
}

// A held job asking for more nodes than its one partition has is taken:
// on the Slurm 22.05 anchor (4 nodes), `sbatch --hold --parsable -N 5
// j.sh` printed a job id (compat corpus: 11 cases). Unheld, Parity still
// refuses it, and a partition among several is still dropped for it.
func TestSubmitHeldJobMoreNodesThanItsPartition(t *testing.T) {
	h := startController(t, noQOSCluster)
	h.register("n1", 8)
	h.register("n2", 8)
	alice := h.as("alice", auth.RoleUser)
	id := h.submit(alice, &pb.JobSpec{Nodes: 3, Hold: true, Script: "#!/bin/sh\n"})
	if j := h.job(id); j.GetState() != StatePending {
		t.Fatalf("held -N 3 on 2 nodes: %s, want PENDING", j.GetState())
	}
	if _, err := alice.Submit(context.Background(), &pb.JobSpec{Nodes: 3, Script: "#!/bin/sh\n"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("unheld -N 3 on 2 nodes: %v, want InvalidArgument", err)
	}
}
