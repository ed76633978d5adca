package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/parityhpc/parity/healthcheck"
)

// What happens to the job on a GPU the health policy failed.
const (
	OnFaultRequeue = "requeue" // requeued like a node failure (when the job or the cluster allows), else NODE_FAIL
	OnFaultFail    = "fail"    // always ends NODE_FAIL
)

// DefaultMaxDrainsPerHour caps automatic drains cluster-wide: beyond it a
// failing device is only reported (an alert event), so a bad rule or a
// flapping fabric cannot drain half the cluster.
const DefaultMaxDrainsPerHour = 20

// Health is the controller's health policy.
type Health struct {
	// Enabled: the controller runs the policy on heartbeats (default true).
	Enabled bool
	// DryRun: decisions are logged, none applied (observe-only).
	DryRun bool
	// Policy is the per-node state machine's configuration.
	Policy healthcheck.Config
	// MaxDrainsPerHour caps automatic GPU and node drains per sliding hour,
	// cluster-wide; 0 means no cap.
	MaxDrainsPerHour int
	// OnFault is OnFaultRequeue or OnFaultFail.
	OnFault string
	// DiagnoseLevel is the level diagnose orders ask for (1 quick … 3 long).
	DiagnoseLevel int
}

// Reclamation is the controller's idle-GPU reclamation policy.
type Reclamation struct {
	// Enabled: idle jobs are tracked (default true; Policy.DryRun, on by
	// default, keeps it advisory until a site turns it off).
	Enabled bool
	Policy  healthcheck.ReclaimConfig
}

// DefaultHealth is the health section's defaults: healthcheck's, except
// that only a device gone from the bus (kind "lost") takes its whole node
// out. A fault whose driver recommends a reboot — an NVIDIA XID 79 —
// drains its GPU and requeues its job like any other GPU-scoped fault (an
// AMD uncorrectable UMC error), so the same fault class has the same
// consequence on every vendor and the rest of the node keeps working; list
// "reboot" under nodeScopedActions to drain the node as well.
func DefaultHealth() Health {
	p := healthcheck.DefaultConfig()
	p.NodeScopedKinds, p.NodeScopedActions = []string{"lost"}, nil
	return Health{Enabled: true, Policy: p, MaxDrainsPerHour: DefaultMaxDrainsPerHour, OnFault: OnFaultRequeue, DiagnoseLevel: 1}
}

// DefaultReclamation is healthcheck's reclamation defaults (dry-run on).
func DefaultReclamation() Reclamation {
	return Reclamation{Enabled: true, Policy: healthcheck.DefaultReclaimConfig()}
}

type rawHealth struct {
	Enabled               *bool     `yaml:"enabled"`
	DryRun                bool      `yaml:"dryRun"`
	StaleAfter            string    `yaml:"staleAfter"`
	WarningsToFail        *int      `yaml:"warningsToFail"`
	WarningWindow         string    `yaml:"warningWindow"`
	RecoveryPasses        *int      `yaml:"recoveryPasses"`
	TempWarnC             *float64  `yaml:"tempWarnC"`
	TempFailC             *float64  `yaml:"tempFailC"`
	UncorrectedErrorsFail *uint64   `yaml:"uncorrectedErrorsFail"`
	CorrectedErrorsWarn   *uint64   `yaml:"correctedErrorsWarn"`
	MaxFailedGPUs         *int      `yaml:"maxFailedGPUs"`
	NodeScopedKinds       *[]string `yaml:"nodeScopedKinds"`
	NodeScopedActions     *[]string `yaml:"nodeScopedActions"`
	FlapLimit             *int      `yaml:"flapLimit"`
	FlapWindow            string    `yaml:"flapWindow"`
	MaxDrainsPerHour      *int      `yaml:"maxDrainsPerHour"`
	OnFault               string    `yaml:"onFault"`
	DiagnoseLevel         *int      `yaml:"diagnoseLevel"`
}

type rawReclamation struct {
	Enabled          *bool    `yaml:"enabled"`
	DryRun           *bool    `yaml:"dryRun"`
	IdleUtilPct      *float64 `yaml:"idleUtilPct"`
	IdlePowerW       *float64 `yaml:"idlePowerW"`
	IdleFor          string   `yaml:"idleFor"`
	Grace            string   `yaml:"grace"`
	MinRuntime       string   `yaml:"minRuntime"`
	MaxSampleGap     string   `yaml:"maxSampleGap"`
	Action           string   `yaml:"action"`
	ExemptAccounts   []string `yaml:"exemptAccounts"`
	ExemptQOS        []string `yaml:"exemptQOS"`
	ExemptPartitions []string `yaml:"exemptPartitions"`
	// ExemptInteractive spares interactive jobs (default true).
	ExemptInteractive *bool `yaml:"exemptInteractive"`
}

// health checks the health section and applies defaults.
func (p *parser) health(r *rawHealth) Health {
	h := DefaultHealth()
	if r.Enabled != nil {
		h.Enabled = *r.Enabled
	}
	h.DryRun = r.DryRun
	pc := &h.Policy
	pc.StaleAfter = p.positive("health.staleAfter", r.StaleAfter, pc.StaleAfter)
	pc.WarningWindow = p.positive("health.warningWindow", r.WarningWindow, pc.WarningWindow)
	pc.FlapWindow = p.positive("health.flapWindow", r.FlapWindow, pc.FlapWindow)
	pc.WarningsToFail = p.atLeast("health.warningsToFail", r.WarningsToFail, 1, pc.WarningsToFail)
	pc.RecoveryPasses = p.atLeast("health.recoveryPasses", r.RecoveryPasses, 1, pc.RecoveryPasses)
	pc.MaxFailedGPUs = p.atLeast("health.maxFailedGPUs", r.MaxFailedGPUs, 0, pc.MaxFailedGPUs)
	pc.FlapLimit = p.atLeast("health.flapLimit", r.FlapLimit, 0, pc.FlapLimit)
	h.MaxDrainsPerHour = p.atLeast("health.maxDrainsPerHour", r.MaxDrainsPerHour, 0, h.MaxDrainsPerHour)
	h.DiagnoseLevel = p.atLeast("health.diagnoseLevel", r.DiagnoseLevel, 1, h.DiagnoseLevel)
	if h.DiagnoseLevel > 4 {
		p.errorf("health.diagnoseLevel", "%d must be within 1..4", h.DiagnoseLevel)
	}
	for _, t := range []struct {
		path string
		v    *float64
		dst  *float64
	}{{"health.tempWarnC", r.TempWarnC, &pc.TempWarnC}, {"health.tempFailC", r.TempFailC, &pc.TempFailC}} {
		if t.v == nil {
			continue
		}
		if *t.v < 0 {
			p.errorf(t.path, "%v must not be negative (0 disables)", *t.v)
			continue
		}
		*t.dst = *t.v
	}
	if pc.TempWarnC > 0 && pc.TempFailC > 0 && pc.TempFailC < pc.TempWarnC {
		p.errorf("health.tempFailC", "%v is below tempWarnC %v", pc.TempFailC, pc.TempWarnC)
	}
	if r.UncorrectedErrorsFail != nil {
		pc.UncorrectedErrorsFail = *r.UncorrectedErrorsFail
	}
	if r.CorrectedErrorsWarn != nil {
		pc.CorrectedErrorsWarn = *r.CorrectedErrorsWarn
	}
	if r.NodeScopedKinds != nil {
		pc.NodeScopedKinds = p.names("health.nodeScopedKinds", *r.NodeScopedKinds)
	}
	if r.NodeScopedActions != nil {
		pc.NodeScopedActions = p.names("health.nodeScopedActions", *r.NodeScopedActions)
	}
	switch strings.ToLower(r.OnFault) {
	case "":
	case OnFaultRequeue, OnFaultFail:
		h.OnFault = strings.ToLower(r.OnFault)
	default:
		p.errorf("health.onFault", "%q must be %s or %s", r.OnFault, OnFaultRequeue, OnFaultFail)
	}
	if err := pc.Validate(); err != nil && len(p.errs) == 0 {
		p.errorf("health", "%v", err)
	}
	return h
}

// reclamation checks the reclamation section and applies defaults.
func (p *parser) reclamation(r *rawReclamation) Reclamation {
	rc := DefaultReclamation()
	if r.Enabled != nil {
		rc.Enabled = *r.Enabled
	}
	pc := &rc.Policy
	if r.DryRun != nil {
		pc.DryRun = *r.DryRun
	}
	if r.IdleUtilPct != nil {
		if v := *r.IdleUtilPct; v <= 0 || v > 100 {
			p.errorf("reclamation.idleUtilPct", "%v must be within (0,100]", v)
		} else {
			pc.IdleUtilPct = v
		}
	}
	if r.IdlePowerW != nil {
		if v := *r.IdlePowerW; v < 0 {
			p.errorf("reclamation.idlePowerW", "%v must not be negative (0 ignores power)", v)
		} else {
			pc.IdlePowerW = v
		}
	}
	pc.IdleFor = p.positive("reclamation.idleFor", r.IdleFor, pc.IdleFor)
	pc.MaxSampleGap = p.positive("reclamation.maxSampleGap", r.MaxSampleGap, pc.MaxSampleGap)
	pc.Grace = p.duration("reclamation.grace", r.Grace, pc.Grace)
	pc.MinRuntime = p.duration("reclamation.minRuntime", r.MinRuntime, pc.MinRuntime)
	switch a := healthcheck.ReclaimMode(strings.ToLower(r.Action)); a {
	case "":
	case healthcheck.ReclaimCancel, healthcheck.ReclaimRequeue:
		pc.Mode = a
	default:
		p.errorf("reclamation.action", "%q must be %s or %s", r.Action, healthcheck.ReclaimCancel, healthcheck.ReclaimRequeue)
	}
	pc.ExemptAccounts = p.names("reclamation.exemptAccounts", r.ExemptAccounts)
	pc.ExemptQOS = p.names("reclamation.exemptQOS", r.ExemptQOS)
	pc.ExemptPartitions = p.names("reclamation.exemptPartitions", r.ExemptPartitions)
	if r.ExemptInteractive != nil {
		pc.ExemptInteractive = *r.ExemptInteractive
	}
	if err := pc.Validate(); err != nil && len(p.errs) == 0 {
		p.errorf("reclamation", "%v", err)
	}
	return rc
}

// positive parses an optional duration that must be above zero.
func (p *parser) positive(path, s string, def time.Duration) time.Duration {
	d := p.duration(path, s, def)
	if s != "" && d <= 0 {
		p.errorf(path, "%q must be positive", s)
		return def
	}
	return d
}

// atLeast reads an optional count with a lower bound.
func (p *parser) atLeast(path string, v *int, lo, def int) int {
	if v == nil {
		return def
	}
	if *v < lo {
		p.errorf(path, "%d must be at least %d", *v, lo)
		return def
	}
	return *v
}

// names checks a list of non-empty names.
func (p *parser) names(path string, vs []string) []string {
	for i, v := range vs {
		if strings.TrimSpace(v) == "" {
			p.errorf(fmt.Sprintf("%s[%d]", path, i), "empty name")
		}
	}
	return vs
}
