// Command parity-shim is the node agent's per-job supervisor alone (what
// `parity agent shim CONFIG` runs, in a binary of its own). It links only
// the shim package, the standard library and x/sys, so the process started
// for every job begins in a few milliseconds and a few MB instead of
// loading the multi-call parity binary with its controller, labs and gRPC
// stack. The agent runs it when it sits beside the parity binary and
// re-executes parity otherwise.
package main

import (
	"os"

	"github.com/parityhpc/parity/scheduler/agent/shim"
)

func main() { os.Exit(shim.Main(os.Args[1:])) }
