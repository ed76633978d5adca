// Package nvdcgm adapts NVIDIA's go-dcgm bindings to vendors/nvidia's DCGM
// interfaces: active diagnostics (dcgmi diag levels 2–4) and DCGM's
// background health watches (PCIe, NVLink, memory, SM, thermal, power,
// driver, micro-controllers, InfoROM), polled every Config.HealthInterval
// and turned into gres.Conditions of kind "dcgm" whose code names the
// system ("memory", or "memory:85" when the DCGM_FR_* code is known) — a
// failure is fatal with the remedy its system calls for, a warning is
// counted by the health policy. An incident is reported when it appears,
// not again while it persists; PCIe, thermal and power are ignored for the
// first polls, as DCGM needs about a minute of data for them.
//
// go-dcgm keeps one process-wide DCGM handle and dlopens libdcgm.so at
// Open; Open fails cleanly when the library or host engine is absent (the
// agent then logs that DCGM is off and the NVIDIA driver runs on NVML
// alone), and a failed Open is never followed by a DCGM Shutdown (go-dcgm's
// reference counter would go negative and break every later Init). The
// go-dcgm calls sit behind a small internal interface (healthAPI) so the
// mapping from incidents to conditions is tested with a fake. Limits of the
// pinned go-dcgm: its health check arms the watches on a throw-away group
// at every call and reports systems and results as prose without the
// DCGM_FR_* codes (mapped back here; Incident.Code stays 0). It imports
// gres, healthcheck (remedy names), go-dcgm and (for the interface checks)
// vendors/nvidia; nothing else in Parity imports it except composition
// roots under cmd/.
package nvdcgm
