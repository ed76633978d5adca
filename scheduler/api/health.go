package api

import (
	"time"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// DiagnosisToProto converts an active check's outcome, stamped with when it ran.
func DiagnosisToProto(d gres.Diagnosis, at time.Time) *pb.Diagnosis {
	p := &pb.Diagnosis{Uuid: d.UUID, Passed: d.Passed, Level: int32(d.Level), Time: Timestamp(at)}
	for _, t := range d.Tests {
		p.Tests = append(p.Tests, &pb.DiagnosisTest{Name: t.Name, Passed: t.Passed, Message: t.Message})
	}
	return p
}

// DiagnosisFromProto converts an active check's outcome back (its time is
// Time(p.GetTime())).
func DiagnosisFromProto(p *pb.Diagnosis) gres.Diagnosis {
	d := gres.Diagnosis{UUID: p.GetUuid(), Passed: p.GetPassed(), Level: int(p.GetLevel())}
	for _, t := range p.GetTests() {
		d.Tests = append(d.Tests, gres.DiagnosisTest{Name: t.GetName(), Passed: t.GetPassed(), Message: t.GetMessage()})
	}
	return d
}
