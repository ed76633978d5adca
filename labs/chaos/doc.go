// Package chaos is the repeatable fault and attack harness behind
// `parity chaos` (`make chaos`): it runs a process lab (labs/cluster's
// UpProcesses, so the controller and each agent are processes that can be
// killed for real) and drives it through scenarios an attacker or an
// unlucky operator would: the controller killed with SIGKILL during a
// submission stream, an agent down past the node-down timeout, an
// authorisation matrix over the CLI, gRPC and HTTP, bad submissions,
// unauthenticated and slow load, a ledger outage and a state-directory
// outage. Each scenario is a row of a Table with its measured figures and
// a verdict; a hard invariant broken (a lost or reused job id, a GPU held
// twice, a wrong authorisation decision, a crash, memory past its ceiling)
// fails the run. Everything runs on loopback (127.0.0.1, OS-chosen ports).
// It may import labs/cluster, labs/labfile, the scheduler's client, API,
// auth and accounting packages and the store (to read the ledger); nothing
// below labs imports it.
package chaos
