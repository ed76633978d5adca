package userverbs

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
)

// pingTimeout bounds how long scontrol ping waits for one controller.
const pingTimeout = 3 * time.Second

// slurmDefaultPort is slurmctld's port: an address on it is printed as
// its host alone, as Slurm names SlurmctldHost.
const slurmDefaultPort = "6817"

// runPing is scontrol ping: one line per controller of the list, in its
// order (Slurm's primary, then backup or backup1, backup2, ...), UP when
// it answers whatever its role, and Slurm's banner when any is DOWN. The
// exit status is 0 either way, as Slurm's.
func runPing(cmd *cobra.Command, env userEnv, cf *clientFlags) error {
	addr := cf.controller
	if addr == "" {
		addr = env.getenv(client.EnvController)
	}
	addrs := clientenv.SplitControllers(client.ResolveAddr(addr))
	down := false
	out := cmd.OutOrStdout()
	for i, a := range addrs {
		state := "UP"
		if err := pingOne(cmd.Context(), cf, env, a); err != nil {
			state, down = "DOWN", true
		}
		fmt.Fprintf(out, "Slurmctld(%s) at %s is %s\n", pingRole(i, len(addrs)), pingHost(a), state)
	}
	if down {
		fmt.Fprintln(out, strings.Repeat("*", 41))
		fmt.Fprintln(out, "** RESTORE SLURMCTLD DAEMON TO SERVICE **")
		fmt.Fprintln(out, strings.Repeat("*", 41))
	}
	return nil
}

// pingRole is Slurm's name for the i-th of n controllers.
func pingRole(i, n int) string {
	switch {
	case i == 0:
		return "primary"
	case n == 2:
		return "backup"
	default:
		return fmt.Sprintf("backup%d", i)
	}
}

func pingHost(addr string) string {
	if host, port, err := net.SplitHostPort(addr); err == nil && port == slurmDefaultPort {
		return host
	}
	return addr
}

// pingOne asks the controller at addr alone for its status.
func pingOne(ctx context.Context, cf *clientFlags, env userEnv, addr string) error {
	one := *cf
	one.controller = addr
	dialer := &cobra.Command{}
	dialer.SetContext(ctx)
	s, err := one.dial(dialer, "scontrol", env)
	if err != nil {
		return err
	}
	defer s.close()
	cctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	_, err = s.c.ControllerStatus(cctx)
	return err
}
