// Package failover measures the replicated control plane the way an
// operator fears losing it: three (or five) `parity controller` processes
// on loopback, a stream of submissions from concurrent clients holding the
// controllers' list, and at a random point of the stream the leader killed
// with SIGKILL. Each trial reports how long it took from the kill to the
// first acknowledged submission (every acknowledgement after the kill is
// the new leader's), and checks the promises: no acknowledged job lost, no
// job id given twice, no submission that was retried after the failover
// turned into two jobs. The killed controller is started again and
// catches up before the next trial.
package failover
