package controller

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// TestEncodeColdMatchesProto checks the hand-written encoding against the
// generated code: same field numbers, decodes to the same message, and the
// same bytes as deterministic proto.Marshal.
func TestEncodeColdMatchesProto(t *testing.T) {
	fields := (&pb.JobSpec{}).ProtoReflect().Descriptor().Fields()
	for name, num := range map[protoreflect.Name]int{"script": int(fieldScript), "env": int(fieldEnv), "argv": int(fieldArgv)} {
		if f := fields.ByName(name); f == nil || int(f.Number()) != num {
			t.Errorf("JobSpec.%s: field number changed (want %d); update cold.go", name, num)
		}
	}
	cases := []*pb.JobSpec{
		{},
		{Script: "#!/bin/sh\ntrue\n"},
		{Script: "#!/bin/bash\n#SBATCH -G 1\nsrun x\n", Env: map[string]string{"PATH": "/usr/bin", "HOME": "/home/a", "EMPTY": "", "": "v"},
			Argv: []string{"a", "", "c d"}},
		{Argv: []string{"only"}},
		{Env: map[string]string{"K": string(make([]byte, 300))}},
	}
	for _, c := range cases {
		got := encodeCold(c.GetScript(), c.GetEnv(), c.GetArgv())
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("encodeCold(%v) = %x, proto.Marshal = %x", c, got, want)
		}
		var back pb.JobSpec
		if err := proto.Unmarshal(got, &back); err != nil || !proto.Equal(&back, c) {
			t.Errorf("encodeCold(%v) decodes to %v, %v", c, &back, err)
		}
	}
}
