// Package replica replicates the controller's commits among 1, 3 or 5
// controllers with hashicorp/raft, and elects the one that serves.
//
// What is replicated is opaque to this package: an entry is the byte form
// of one group commit (the writes that make a group of commands durable),
// and the FSM the caller gives applies it to the controller's store on
// every replica. Only the leader applies commands and serves; an entry is
// acknowledged once a quorum holds it in its log (raft-boltdb, fsynced) and
// the leader's FSM applied it. Snapshots are the FSM's (a copy of the
// store); a replica that was down catches up from the log or a snapshot.
//
// Replicas talk over the controller's own listener (the caller's stream
// layer), and every connection between them is mutually authenticated
// with the cluster key (auth.go) before raft reads a byte, so a user or
// agent token cannot join the group.
package replica
