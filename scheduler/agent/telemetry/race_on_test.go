//go:build race

package telemetry

// raceEnabled: the race detector multiplies CPU time and memory, so the
// overhead budget is not asserted under it.
const raceEnabled = true
