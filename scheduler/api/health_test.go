package api

import (
	"reflect"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
)

func TestDiagnosisRoundTrip(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, d := range []gres.Diagnosis{
		{UUID: "GPU-a", Passed: true, Level: 1, Tests: []gres.DiagnosisTest{{Name: "nvml-reachable", Passed: true}}},
		{UUID: "GPU-b", Level: 2, Tests: []gres.DiagnosisTest{{Name: "ras-uncorrectable", Message: "umc ue=1"}, {Name: "present", Passed: true}}},
	} {
		p := DiagnosisToProto(d, at)
		if got := DiagnosisFromProto(p); !reflect.DeepEqual(got, d) {
			t.Errorf("diagnosis: got %+v want %+v", got, d)
		}
		if !Time(p.GetTime()).Equal(at) {
			t.Errorf("diagnosis time %v, want %v", Time(p.GetTime()), at)
		}
	}
}
