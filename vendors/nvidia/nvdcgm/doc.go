// Package nvdcgm adapts NVIDIA's go-dcgm bindings to vendors/nvidia's DCGM
// interface, for active diagnostics (dcgmi diag levels 2–4). go-dcgm keeps
// one process-wide DCGM handle and dlopens libdcgm.so at Open; Open fails
// cleanly when the library or host engine is absent, and a failed Open is
// never followed by a DCGM Shutdown (go-dcgm's reference counter would go
// negative and break every later Init). It imports gres, go-dcgm and (for
// the interface check) vendors/nvidia; nothing else in Parity imports it
// except composition roots under cmd/.
package nvdcgm
