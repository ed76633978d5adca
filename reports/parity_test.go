package reports

import (
	"strings"
	"testing"
)

func twoVendorRun(specs ...SpecResult) *Run {
	return &Run{ID: "r", Vendors: []Vendor{{Name: "nvidia", Model: "h100"}, {Name: "amd", Model: "mi300x"}, {Name: "cpu"}}, Specs: specs}
}

func res(vendor string, st Status, kv ...string) SpecResult {
	s := SpecResult{ID: "isolation/visible", Area: AreaIsolation, Name: "visible devices", Vendor: vendor, Status: st}
	if st == StatusSkipped {
		s.Reason = "no capability"
	}
	if len(kv) > 0 {
		s.Observations = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Observations[kv[i]] = kv[i+1]
		}
	}
	return s
}

func TestCompareVendors(t *testing.T) {
	tests := []struct {
		name       string
		specs      []SpecResult
		norm       Normaliser
		wantStatus Status
		// wantText are substrings the reason or evidence must contain.
		wantText []string
		wantObs  map[string]string
	}{
		{
			name: "equal after GPU names are normalised",
			specs: []SpecResult{
				res("nvidia", StatusPassed, "gres", "gpu:h100:2", "visible", "0,1"),
				res("amd", StatusPassed, "gres", "gpu:MI300X:2", "visible", "0,1"),
			},
			wantStatus: StatusPassed,
			wantObs:    map[string]string{"gres": "gpu:<gpu>:2", "visible": "0,1"},
		},
		{
			name: "different visible devices name both sides",
			specs: []SpecResult{
				res("nvidia", StatusPassed, "visible", "0,1"),
				res("amd", StatusPassed, "visible", "0,1,2"),
			},
			wantStatus: StatusFailed,
			wantText:   []string{"nvidia: visible=0,1 ; amd: visible=0,1,2", "nvidia and amd differ on visible"},
		},
		{
			name: "an observation one vendor lacks",
			specs: []SpecResult{
				res("nvidia", StatusPassed, "visible", "0,1", "mig", "off"),
				res("amd", StatusPassed, "visible", "0,1"),
			},
			wantStatus: StatusFailed,
			wantText:   []string{"nvidia: mig=off ; amd: mig=<absent>"},
			wantObs:    map[string]string{"visible": "0,1"},
		},
		{
			name: "same observations, different verdicts",
			specs: []SpecResult{
				res("nvidia", StatusPassed, "visible", "0"),
				res("amd", StatusFailed, "visible", "0"),
			},
			wantStatus: StatusFailed,
			wantText:   []string{"nvidia: status=passed ; amd: status=failed"},
		},
		{
			name: "three vendors, one differs: every side is named",
			specs: []SpecResult{
				res("nvidia", StatusPassed, "count", "2"),
				res("amd", StatusPassed, "count", "2"),
				res("cpu", StatusPassed, "count", "0"),
			},
			wantStatus: StatusFailed,
			wantText:   []string{"nvidia: count=2 ; amd: count=2 ; cpu: count=0", "nvidia, amd, cpu differ on count"},
		},
		{
			name: "a skipped vendor makes it not comparable, with the reason",
			specs: []SpecResult{
				res("nvidia", StatusPassed, "visible", "0"),
				res("amd", StatusSkipped),
			},
			wantStatus: StatusSkipped,
			wantText:   []string{"only nvidia reached a verdict", "amd skipped (no capability)"},
		},
		{
			name:       "a spec run for one vendor only",
			specs:      []SpecResult{res("nvidia", StatusPassed, "visible", "0")},
			wantStatus: StatusSkipped,
			wantText:   []string{"ran for nvidia only"},
		},
		{
			name: "a Normaliser hook erases a vendor's naming",
			specs: []SpecResult{
				res("nvidia", StatusPassed, "env", "CUDA_VISIBLE_DEVICES=0"),
				res("amd", StatusPassed, "env", "ROCR_VISIBLE_DEVICES=0"),
			},
			norm: func(_, key, v string) string {
				if key == "env" {
					_, v, _ = strings.Cut(v, "=")
				}
				return v
			},
			wantStatus: StatusPassed,
			wantObs:    map[string]string{"env": "0"},
		},
		{
			name: "without the hook the same values differ",
			specs: []SpecResult{
				res("nvidia", StatusPassed, "env", "CUDA_VISIBLE_DEVICES=0"),
				res("amd", StatusPassed, "env", "ROCR_VISIBLE_DEVICES=0"),
			},
			wantStatus: StatusFailed,
			wantText:   []string{"nvidia: env=CUDA_VISIBLE_DEVICES=0 ; amd: env=ROCR_VISIBLE_DEVICES=0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := twoVendorRun(tt.specs...)
			got := CompareVendors(r, tt.norm)
			if len(got) != 1 {
				t.Fatalf("got %d parity results, want 1: %+v", len(got), got)
			}
			p := got[0]
			if p.ID != "parity/isolation/visible" || p.Area != AreaParity || p.Vendor != "" {
				t.Errorf("identity = %q %q %q, want parity/isolation/visible, parity, cross-vendor", p.ID, p.Area, p.Vendor)
			}
			if p.Status != tt.wantStatus {
				t.Errorf("status = %s, want %s (reason %q)", p.Status, tt.wantStatus, p.Reason)
			}
			all := p.Reason
			for _, e := range p.Evidence {
				all += "\n" + e.Text
			}
			for _, w := range tt.wantText {
				if !strings.Contains(all, w) {
					t.Errorf("reason/evidence %q lacks %q", all, w)
				}
			}
			for k, v := range tt.wantObs {
				if p.Observations[k] != v {
					t.Errorf("agreed observation %s = %q, want %q", k, p.Observations[k], v)
				}
			}
			r.Specs = append(r.Specs, got...)
			if err := r.Validate(); err != nil {
				t.Errorf("run with parity results does not validate: %v", err)
			}
			if again := CompareVendors(r, tt.norm); len(again) != 1 {
				t.Errorf("comparing again compared the parity results too: %d results", len(again))
			}
		})
	}
}

func TestGPUTypeNormaliser(t *testing.T) {
	n := GPUTypeNormaliser("h100", "H100-80GB", "mi300x", "")
	tests := []struct{ in, want string }{
		{"gpu:h100:2", "gpu:<gpu>:2"},
		{"H100", "<gpu>"},
		{"gpu:h100-80gb:1", "gpu:<gpu>:1"},
		{"h1000", "h1000"},
		{"xh100", "xh100"},
		{"h100,mi300x", "<gpu>,<gpu>"},
		{"gres/gpu:mi300x=2,gres/gpu=2", "gres/gpu:<gpu>=2,gres/gpu=2"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := n("any", "k", tt.in); got != tt.want {
			t.Errorf("normalise(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSampleRunParity(t *testing.T) {
	r := sampleRun()
	byID := map[string]SpecResult{}
	for _, s := range r.Specs {
		if s.CrossVendor() {
			byID[s.ID] = s
		}
	}
	if s := byID["parity/placement/numa-local"]; s.Status != StatusPassed {
		t.Errorf("numa-local parity = %s (%s), want passed: gpu:h100:2 and gpu:mi300x:2 are equal after normalisation", s.Status, s.Reason)
	}
	if s := byID["parity/isolation/visible-devices"]; s.Status != StatusFailed {
		t.Errorf("visible-devices parity = %s, want failed", s.Status)
	}
}
