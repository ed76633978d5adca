// Command parity-agent is the node agent alone (what `parity agent` runs,
// without the simulated machines): it links the agent, the in-tree
// drivers and the client, not the controller, its stores, the labs and
// the conformance suite of the multi-call parity binary, whose mapped
// code pages were most of the agent's resident memory.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/parityhpc/parity/cmd/internal/agentcmd"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := agentcmd.New(agentcmd.Options{Version: version, ShimArgs: []string{"shim"}})
	cmd.Use = "parity-agent"
	cmd.Version = version
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "parity-agent:", err)
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			os.Exit(ec.ExitCode())
		}
		os.Exit(1)
	}
}
