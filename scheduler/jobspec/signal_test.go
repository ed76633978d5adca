package jobspec

import (
	"errors"
	"testing"
	"time"
)

func TestParseSignal(t *testing.T) {
	tests := []struct {
		in   string
		want Signal
		text string
	}{
		{"USR1", Signal{Number: 10, Lead: 60 * time.Second}, "USR1@60"},
		{"B:USR2@120", Signal{Batch: true, Number: 12, Lead: 120 * time.Second}, "B:USR2@120"},
		{"R:10@0", Signal{Reservation: true, Number: 10}, "R:USR1@0"},
		{"RB:SIGTERM@30", Signal{Batch: true, Reservation: true, Number: 15, Lead: 30 * time.Second}, "RB:TERM@30"},
		{"sigusr1", Signal{Number: 10, Lead: 60 * time.Second}, "USR1@60"},
		{"40@65535", Signal{Number: 40, Lead: 65535 * time.Second}, "40@65535"},
	}
	for _, tt := range tests {
		got, err := ParseSignal(tt.in)
		if err != nil || got != tt.want || got.String() != tt.text {
			t.Errorf("ParseSignal(%q) = %+v (%s), %v; want %+v (%s)", tt.in, got, got, err, tt.want, tt.text)
		}
		if back, err := ParseSignal(tt.text); err != nil || back != tt.want {
			t.Errorf("ParseSignal(%q) = %+v, %v", tt.text, back, err)
		}
	}
	for _, in := range []string{"", "FOO", "0", "65", "X:USR1", "USR1@", "USR1@70000", "USR1@-1", ":USR1", "B:"} {
		if _, err := ParseSignal(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseSignal(%q) error = %v; want ErrInvalid", in, err)
		}
	}
}
