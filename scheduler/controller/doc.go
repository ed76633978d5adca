// Package controller is Parity's controller daemon (the slurmctld role) and
// the cluster's single source of truth. It keeps jobs, nodes and the
// decision log in memory with a durable copy in an embedded bbolt store,
// where a single writer goroutine commits mutations in groups and
// acknowledges none before its commit; it serves the parity.v1 gRPC API
// behind scheduler/auth, enforcing per-job authorisation (users act on
// their own jobs; operators on all; only admins read another user's script
// and environment); it runs scheduler/core on events and on an interval and
// applies the plans; it reconciles with what node agents report and
// exposes Prometheus metrics and structured logs. It may import the
// scheduler packages below it (core, policy, config, auth, api, store),
// gres and topology; it must not import the agent, the client, labs,
// conformance or any vendor package.
package controller
