// Package labfile reads lab files: YAML descriptions of a simulated
// cluster — node sets built from machine templates (labs/presets), their
// features, partitions, a switch tree, and timed fault scripts — and holds
// the built-in labs. Errors name the file, line and field. It may import
// labs/presets, topology and scheduler/jobspec; it starts nothing.
package labfile
