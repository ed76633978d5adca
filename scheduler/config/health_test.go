package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/healthcheck"
)

const healthBase = "cluster: x\npartitions:\n  - name: a\n    nodes: n1\n"

func TestHealthDefaults(t *testing.T) {
	c, err := Load("testdata/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h, r := c.Health, c.Reclamation
	if !h.Enabled || h.DryRun || h.OnFault != OnFaultRequeue || h.MaxDrainsPerHour != DefaultMaxDrainsPerHour || h.DiagnoseLevel != 1 {
		t.Fatalf("health defaults: %+v", h)
	}
	def := healthcheck.DefaultConfig()
	if h.Policy.RecoveryPasses != def.RecoveryPasses || h.Policy.StaleAfter != def.StaleAfter || h.Policy.FlapLimit != def.FlapLimit {
		t.Fatalf("policy defaults %+v, want healthcheck's %+v", h.Policy, def)
	}
	// Only a device gone from the bus takes the node; a reboot-class XID
	// drains its GPU like any other GPU-scoped fault.
	if !slices.Equal(h.Policy.NodeScopedKinds, []string{"lost"}) || len(h.Policy.NodeScopedActions) != 0 {
		t.Fatalf("node-scoped kinds %v actions %v", h.Policy.NodeScopedKinds, h.Policy.NodeScopedActions)
	}
	if !r.Enabled || !r.Policy.DryRun || r.Policy.Mode != healthcheck.ReclaimCancel || r.Policy.IdleFor != time.Hour || !r.Policy.ExemptInteractive {
		t.Fatalf("reclamation defaults: %+v", r)
	}
}

func TestHealthFull(t *testing.T) {
	c, err := Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h, r := c.Health, c.Reclamation
	if h.Policy.RecoveryPasses != 3 || h.Policy.FlapWindow != 24*time.Hour || !slices.Equal(h.Policy.NodeScopedActions, []string{"reboot"}) ||
		h.MaxDrainsPerHour != 8 || h.OnFault != OnFaultFail {
		t.Fatalf("health: %+v", h)
	}
	if r.Policy.DryRun || r.Policy.IdleFor != 2*time.Hour || r.Policy.Grace != 45*time.Minute || r.Policy.Mode != healthcheck.ReclaimRequeue ||
		!slices.Equal(r.Policy.ExemptQOS, []string{"debug"}) || !slices.Equal(r.Policy.ExemptPartitions, []string{"interactive"}) ||
		r.Policy.ExemptInteractive {
		t.Fatalf("reclamation: %+v", r)
	}
}

func TestHealthErrorsNameLineAndField(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"bad duration", "health:\n  staleAfter: soon\n", []string{`c.yaml:6: health.staleAfter: "soon" is not a duration`}},
		{"zero window", "health:\n  warningWindow: 0s\n", []string{`c.yaml:6: health.warningWindow: "0s" must be positive`}},
		{"count below bound", "health:\n  recoveryPasses: 0\n", []string{`c.yaml:6: health.recoveryPasses: 0 must be at least 1`}},
		{"unknown policy", "health:\n  onFault: ignore\n", []string{`c.yaml:6: health.onFault: "ignore" must be requeue or fail`}},
		{"temperatures crossed", "health:\n  tempWarnC: 90\n  tempFailC: 80\n", []string{`c.yaml:7: health.tempFailC: 80 is below tempWarnC 90`}},
		{"unknown health field", "health:\n  xidDrain: 79\n", []string{`c.yaml:6: health.xidDrain: unknown field "xidDrain"`}},
		{"diagnose level", "health:\n  diagnoseLevel: 9\n", []string{`c.yaml:6: health.diagnoseLevel: 9 must be within 1..4`}},
		{"reclaim action", "reclamation:\n  action: kill\n", []string{`c.yaml:6: reclamation.action: "kill" must be cancel or requeue`}},
		{"reclaim threshold", "reclamation:\n  idleUtilPct: 0\n", []string{`c.yaml:6: reclamation.idleUtilPct: 0 must be within (0,100]`}},
		{"empty exemption", "reclamation:\n  exemptAccounts: [ops, \"\"]\n", []string{`c.yaml:6: reclamation.exemptAccounts[1]: empty name`}},
		{"negative grace", "reclamation:\n  grace: -5m\n", []string{`c.yaml:6: reclamation.grace: "-5m" is negative`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(healthBase+tc.text))
			if err == nil {
				t.Fatalf("no error, want %v", tc.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("error %d = %q\n want prefix %q", i, lines[i], w)
				}
			}
		})
	}
}

func TestHealthDisabled(t *testing.T) {
	c, err := Parse("c.yaml", []byte(healthBase+"health:\n  enabled: false\n  dryRun: true\nreclamation:\n  enabled: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Health.Enabled || !c.Health.DryRun || c.Reclamation.Enabled {
		t.Fatalf("health %+v reclamation %+v", c.Health, c.Reclamation)
	}
}
