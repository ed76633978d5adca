// Package jobhistory records the client operations of a fault run on the
// job table (submit, cancel, update, read of a job, each with the time it
// was invoked and the time it returned, from concurrent clients) and
// checks the history for linearizability with porcupine against a model
// of the job table, as etcd's robustness tests do. A history that no
// sequential order explains fails the check, and its visualisation (an
// HTML file porcupine writes) is saved for a person to read.
//
// It is a test helper: tests of the controller record through it.
package jobhistory
