package sbatch

import (
	"errors"
	"testing"
)

func TestVoice(t *testing.T) {
	err := errors.New("submit: --partition=nope: invalid partition name specified")
	for _, c := range []struct {
		v             Voice
		errLine, warn string
	}{
		{Voice{}, "parity: submit: --partition=nope: invalid partition name specified", "parity: submit: warning: partition debug dropped"},
		{Voice{Slurm: "sbatch"}, "sbatch: error: --partition=nope: invalid partition name specified", "sbatch: warning: partition debug dropped"},
	} {
		if got := c.v.Error("submit", err); got != c.errLine {
			t.Errorf("%+v: Error = %q, want %q", c.v, got, c.errLine)
		}
		if got := c.v.Warning("submit", "partition debug dropped"); got != c.warn {
			t.Errorf("%+v: Warning = %q, want %q", c.v, got, c.warn)
		}
	}
}
