//go:build race

package replay

// raceEnabled shrinks real-trace checks under the race detector, which
// slows the single-threaded replay tenfold without adding coverage.
const raceEnabled = true
