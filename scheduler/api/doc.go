// Package api owns Parity's wire protocol: the protobuf definitions under
// parity/v1 (package parity.v1), the generated Go code in parityv1 (committed;
// `go generate ./scheduler/api` regenerates it with protoc and the Go
// plugins), and conversions between the wire messages and the domain types
// of gres and topology. Messages only grow — fields are added, never renamed
// or renumbered. It may import gres, topology, the generated code and the
// protobuf runtime; it must not import the controller, the agent, the client
// or any vendor package.
package api
