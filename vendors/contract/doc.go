// Package contract certifies any vendors.Driver — in-tree, or an
// out-of-tree adapter reached through vendors/plugin — against the driver
// contract: a well-formed Info, a valid inventory with UUIDs stable across
// discoveries and driver restarts, device files that exist with the
// reported numbers, idempotent Prepare and Release, visible-device ordinals
// consistent with the prepared device files, samples within physical
// ranges, well-formed conditions and diagnoses, and ErrNotApplicable on an
// empty host. Check returns one named Result per check; callers (the
// `parity conform driver` command, the conformance suite) render them. It
// imports vendors, gres and topology only — never a vendor package, the
// scheduler, labs or reports.
package contract
