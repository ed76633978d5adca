package controller

import (
	"math"
	"math/big"
	"testing"
	"unicode"

	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
)

// FuzzCheckSpecInput: any wire JobSpec is refused with an error or
// accepted, never a panic; and what is accepted keeps every per-node
// product the scheduler forms (CPUs, memory) within its documented bound,
// computed here without overflow, and every name printable.
func FuzzCheckSpecInput(f *testing.F) {
	seeds := []*pb.JobSpec{
		{Name: "ok", Script: "#!/bin/sh\n", Ntasks: 4, CpusPerTask: 2, MemPerCpuMb: 1024},
		{Name: "x\ny", Script: "#!/bin/sh\n"},
		{Script: "#!/bin/sh\n", MemPerCpuMb: 1 << 62, CpusPerTask: 4},
		{Script: "#!/bin/sh\n", NtasksPerNode: 1 << 13, CpusPerTask: 1 << 11, MemPerCpuMb: 1 << 26},
		{Script: "#!/bin/sh\n", MemPerGpuMb: 1 << 30, Gres: &pb.GRESRequest{PerTask: []*pb.GRESTerm{{Name: "gpu", Count: 1 << 10}}}, NtasksPerNode: 1 << 10},
		{Interactive: true, MaxNodes: -1, TimeMinSeconds: -5},
	}
	for _, s := range seeds {
		b, err := proto.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	lim := config.JobLimits{MaxArraySize: config.DefaultMaxArraySize, MaxJobCount: config.DefaultMaxJobCount,
		MaxScriptSize: config.DefaultMaxScriptSize, MaxNameLength: config.DefaultMaxNameLength}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := &pb.JobSpec{}
		if proto.Unmarshal(b, s) != nil {
			return
		}
		if checkSpecInput(s, lim) != nil {
			return
		}
		nodes := max(int64(s.GetNodes()), 1)
		tpn := max(int64(s.GetNtasksPerNode()), 1)
		if s.GetNtasksPerNode() == 0 && s.GetNtasks() > 0 {
			tpn = (int64(s.GetNtasks()) + nodes - 1) / nodes
		}
		cpn := new(big.Int).Mul(big.NewInt(tpn), big.NewInt(max(int64(s.GetCpusPerTask()), 1)))
		if cpn.Cmp(big.NewInt(config.MaxCount)) > 0 {
			t.Fatalf("accepted %d CPUs per node: %v", cpn, s)
		}
		mem := new(big.Int).Mul(big.NewInt(s.GetMemPerCpuMb()), cpn)
		if mem.Cmp(big.NewInt(config.MaxMemoryMB)) > 0 || mem.Cmp(big.NewInt(math.MaxInt64)) > 0 {
			t.Fatalf("accepted %d MiB per node: %v", mem, s)
		}
		for _, v := range []string{s.GetName(), s.GetComment(), s.GetAccount(), s.GetPartition(), s.GetOutput(), s.GetWorkdir()} {
			for _, r := range v {
				if unicode.IsControl(r) {
					t.Fatalf("accepted a control character in %q", v)
				}
			}
		}
	})
}
