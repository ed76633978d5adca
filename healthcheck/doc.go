// Package healthcheck is Parity's vendor-free health policy: it turns device
// samples, conditions and diagnoses (gres.Sample, gres.Condition,
// gres.Diagnosis) and node-level check results into verdicts per device
// (healthy, suspect, failed, unknown) with hysteresis, maps them to actions
// (drain or resume a GPU or node, requeue jobs, diagnose, hold a flapping
// device for an admin) and decides idle-GPU reclamation per job. It also
// holds fault catalogues that are plain published data — the NVIDIA XID
// table (XIDCatalogue, ClassifyXID) and the remedy names drivers put in
// gres.Condition.Action — which vendor packages import. Every
// decision carries the inputs that made it, for the decision log. It is pure
// policy: time is an argument, there are no goroutines, no I/O and no logs;
// it imports only gres and the standard library, never a vendor package or
// the scheduler.
package healthcheck
