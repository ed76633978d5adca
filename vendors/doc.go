// Package vendors is the driver contract between Parity and accelerator
// hardware: a Driver describes what a host has and prepares access to an
// allocation the scheduler decided; it never allocates. Optional
// capabilities (Sampler, HealthWatcher, Diagnoser) are found by type
// assertion. Vendor packages live below this one (nvidia, amd, cpu, plugin);
// vendors/builtin assembles the in-tree list as a value. This package imports
// only gres and topology.
package vendors
