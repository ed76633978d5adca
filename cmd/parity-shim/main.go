// Command parity-shim is the node's job supervisor alone (what
// `parity agent shim serve` runs, in a binary of its own). It links only
// the shim and ctlfile packages, the standard library and x/sys, so the
// one process that outlives agent restarts and parents every job of the
// node holds a few MB instead of the multi-call parity binary with its
// controller, labs and gRPC stack. The agent starts it when it sits beside the parity
// binary and re-executes parity otherwise.
package main

import (
	"os"

	"github.com/parityhpc/parity/scheduler/agent/shim"
)

func main() { os.Exit(shim.Main(os.Args[1:])) }
