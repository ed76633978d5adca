// Package reports owns the normalised result tree of a conformance run (Run:
// metadata, vendors, spec results with evidence and observations, the lab
// timeline and per-GPU series), the cross-vendor parity comparison, the diff
// against a previous run, and its readers and writers: JUnit XML for CI, JSON
// with a documented stable schema (SCHEMA.md), one self-contained HTML page
// with inline SVG charts, and a plain-text matrix for terminals. Rendering is
// a pure function of the tree and an injected timestamp. It imports only the
// standard library: it reads results, never suites, so it must not import
// conformance, labs, scheduler or vendors.
package reports
