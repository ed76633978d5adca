package amd

import "testing"

func TestGFXTarget(t *testing.T) {
	for in, want := range map[string]string{"90402": "gfx942", "90010": "gfx90a", "110000": "gfx1100", "": "", "x": "", "91600": "", "-1": ""} {
		if got := gfxTarget(in); got != want {
			t.Errorf("gfxTarget(%q) = %q, want %q", in, got, want)
		}
	}
}
