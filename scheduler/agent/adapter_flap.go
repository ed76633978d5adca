package agent

import (
	"fmt"
	"time"

	"github.com/parityhpc/parity/gres"
)

// AdapterFlapping is the code of the conditions that drain an adapter's
// devices when it has been lost FlapRestarts times within FlapWindow.
const AdapterFlapping = "flapping"

// lossLocked counts a loss of the up adapter at now: the losses within
// the window, and whether they make it flapping, which holds it until it
// runs a whole window without a loss. a.mu is held.
func (a *Adapter) lossLocked(now time.Time) (n int, flapping bool) {
	p := a.cfg.Policy
	kept := a.losses[:0]
	for _, t := range a.losses {
		if now.Sub(t) < p.FlapWindow {
			kept = append(kept, t)
		}
	}
	a.losses = append(kept, now)
	n = len(a.losses)
	if n >= p.FlapRestarts {
		a.flapHeld = true
	}
	return n, a.flapHeld
}

// lossMessage is what the drain conditions of the n-th loss within the
// window say, and their code.
func (a *Adapter) lossMessage(code, why string, n int, flapping bool) (string, string) {
	p := a.cfg.Policy
	switch {
	case flapping:
		return AdapterFlapping, fmt.Sprintf("adapter %s flapping: lost %d times within %v (last: %s); its devices stay drained until it runs %v without a loss",
			p.Target, n, p.FlapWindow, why, p.FlapWindow)
	case n > 1:
		return code, fmt.Sprintf("adapter %s: %s (lost %d times within %v)", p.Target, why, n, p.FlapWindow)
	}
	return code, fmt.Sprintf("adapter %s: %s", p.Target, why)
}

// flapHold says why the adapter's devices stay drained while it is held
// as flapping ("" when it is not), releasing the hold once the adapter
// has run a whole window since its last loss.
func (a *Adapter) flapHold() string {
	p := a.cfg.Policy
	now := a.cfg.Clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.flapHeld {
		return ""
	}
	last := a.losses[len(a.losses)-1]
	if since := now.Sub(last); since < p.FlapWindow {
		return fmt.Sprintf("adapter %s flapping: lost %d times within %v; held until it runs %v without a loss (%v to go)",
			p.Target, len(a.losses), p.FlapWindow, p.FlapWindow, (p.FlapWindow - since).Round(time.Second))
	}
	a.flapHeld, a.losses = false, nil
	a.log.Info("adapter stable again: its devices may return", "without a loss for", p.FlapWindow)
	return ""
}

// heldDiagnosis is the failed diagnosis of a device of a flapping adapter.
func heldDiagnosis(uuid string, level int, why string) gres.Diagnosis {
	return gres.Diagnosis{UUID: uuid, Level: level, Tests: []gres.DiagnosisTest{{Name: "adapter-stable", Message: why}}}
}
