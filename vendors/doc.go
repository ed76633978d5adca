// Package vendors is the driver contract between Parity and accelerator
// hardware: a Driver describes what a host has and prepares access to an
// allocation the scheduler decided; it never allocates. Optional
// capabilities (Sampler, HealthWatcher, Diagnoser) are found by type
// assertion. Vendor packages live below this one (nvidia, amd, cpu, plugin).
// A Registry value holds drivers by name, each with a factory that decodes
// its own settings block (DecodeSettings); vendors/builtin registers the
// in-tree ones, and the agent builds its drivers from the node's
// configuration through it. CheckInventory refuses an inventory a node
// cannot hold. This package imports only gres and topology.
package vendors
