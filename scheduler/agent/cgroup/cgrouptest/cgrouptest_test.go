package cgrouptest

import "testing"

func TestVerdict(t *testing.T) {
	for res, want := range map[string]string{
		"opened": Allowed, "No such device or address": Allowed, "No such device": Allowed,
		EPERM: EPERM, "No such file or directory": "No such file or directory",
	} {
		if got := Verdict(res); got != want {
			t.Errorf("Verdict(%q) = %q, want %q", res, got, want)
		}
	}
}
