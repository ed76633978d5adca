package agent

import (
	"context"
	"fmt"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// Sample forwards to the adapter and keeps the registered devices it
// still describes as registered, stamped with the agent's clock where the
// adapter gave no time: a gone adapter samples nothing, so its devices
// fall silent rather than look healthy.
func (a *Adapter) Sample(ctx context.Context) ([]gres.Sample, error) {
	conn, err := a.current()
	if err != nil {
		return nil, nil
	}
	s, ok := conn.(vendors.Sampler)
	if !ok {
		return nil, nil
	}
	var got []gres.Sample
	err = a.bounded(ctx, a.cfg.Policy.CallTimeout, func(ctx context.Context) error {
		var err error
		got, err = s.Sample(ctx)
		return err
	})
	if err != nil {
		a.failed()
		return nil, fmt.Errorf("adapter %s: %w", a.cfg.Policy.Target, err)
	}
	now := a.cfg.Clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	out := got[:0:0]
	for _, smp := range got {
		if smp.Time.IsZero() || a.cfg.Stamp {
			// The controller counts a sample once per time stamp: an
			// adapter that sends none would look silent after its first.
			smp.Time = now
		}
		if _, reg := a.registered[smp.UUID]; reg {
			if _, gone := a.missing[smp.UUID]; !gone {
				out = append(out, smp)
			}
		}
	}
	return out, nil
}

// Diagnose fails while the adapter is held as flapping, naming it and
// its losses; otherwise it runs the adapter's own diagnostics when it has them. An
// adapter without them is checked for what its devices' return needs:
// it answers, and the device is in its inventory as registered and
// samples. A device of a gone adapter fails with why.
func (a *Adapter) Diagnose(ctx context.Context, uuid string, level int) (gres.Diagnosis, error) {
	a.mu.Lock()
	_, reg := a.registered[uuid]
	a.mu.Unlock()
	if !reg {
		return gres.Diagnosis{}, fmt.Errorf("%w: %s is not a device of adapter %s", gres.ErrUnknownDevice, uuid, a.cfg.Policy.Target)
	}
	conn, err := a.current(uuid)
	if err != nil {
		return gres.Diagnosis{}, err
	}
	if why := a.flapHold(); why != "" {
		return heldDiagnosis(uuid, level, why), nil
	}
	if dg, ok := conn.(vendors.Diagnoser); ok {
		d, err := dg.Diagnose(ctx, uuid, level)
		if err != nil {
			a.failed()
		}
		return d, err
	}
	return a.presence(ctx, conn, uuid, level), nil
}

// presence is the diagnosis of an adapter that has none of its own.
func (a *Adapter) presence(ctx context.Context, conn vendors.Driver, uuid string, level int) gres.Diagnosis {
	d := gres.Diagnosis{UUID: uuid, Level: level}
	test := func(name string, err error, ok string) {
		t := gres.DiagnosisTest{Name: name, Passed: err == nil, Message: ok}
		if err != nil {
			t.Message = err.Error()
		}
		d.Tests = append(d.Tests, t)
	}
	inv, err := a.discover(ctx, conn)
	if err == nil {
		err = a.asRegistered(inv, uuid)
	}
	test("adapter-inventory", err, "in the adapter's inventory as registered")
	if err == nil {
		samples, serr := a.Sample(ctx)
		if serr == nil && !containsSample(samples, uuid) && conn.Info().Has(vendors.CapSamples) {
			serr = fmt.Errorf("the adapter's samples leave out %s", uuid)
		}
		test("adapter-sample", serr, "the adapter samples it")
	}
	d.Passed = true
	for _, t := range d.Tests {
		d.Passed = d.Passed && t.Passed
	}
	return d
}

// asRegistered reports whether inv describes uuid as it was registered.
// It changes nothing: draining is the supervisor's, which sees the same.
func (a *Adapter) asRegistered(inv gres.Inventory, uuid string) error {
	a.mu.Lock()
	was := a.registered[uuid]
	a.mu.Unlock()
	for _, d := range inv.Devices {
		if d.UUID == uuid {
			if diff := deviceChange(was, d); diff != "" {
				return fmt.Errorf("device %s changed in the adapter's inventory: %s", uuid, diff)
			}
			return nil
		}
	}
	return fmt.Errorf("device %s left the adapter's inventory", uuid)
}

func containsSample(ss []gres.Sample, uuid string) bool {
	for _, s := range ss {
		if s.UUID == uuid {
			return true
		}
	}
	return false
}
