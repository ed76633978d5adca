// Package healthcheck is Parity's vendor-free health policy: it turns device
// samples, conditions and diagnoses (gres.Sample, gres.Condition,
// gres.Diagnosis) and node-level check results into verdicts per device
// (healthy, suspect, failed, unknown) with hysteresis, maps them to actions
// (drain or resume a GPU or node, requeue jobs, diagnose, hold a flapping
// device for an admin) and decides idle-GPU reclamation per job. It also
// holds the vendor-neutral condition model drivers share — the remedy names
// they put in gres.Condition.Action and the Class of a catalogue entry —
// while each vendor's catalogue (error numbers, RAS blocks) lives in its
// driver. Every
// decision carries the inputs that made it, for the decision log. It is pure
// policy: time is an argument, there are no goroutines, no I/O and no logs;
// it imports only gres and the standard library, never a vendor package or
// the scheduler.
package healthcheck
