package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
)

// controllerFlags reach the controllers: --controller (a list), a token
// and the CA of their TLS certificate.
type controllerFlags struct{ addr, token, ca string }

func (f *controllerFlags) bind(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "controller", "", "controllers, comma-separated (default $"+client.EnvController+" or "+client.DefaultAddr+")")
	fl.StringVar(&f.token, "token", "", "token (default $"+client.EnvToken+" or ~/.config/parity/token)")
	fl.StringVar(&f.ca, "ca", "", "PEM file of the CA that signed the controllers' TLS certificate (default $"+client.EnvCA+")")
}

func (f *controllerFlags) dial(ctx context.Context, addr string) (*client.Client, error) {
	tok, err := client.ResolveToken(f.token)
	if err != nil {
		return nil, err
	}
	var opts []grpc.DialOption
	if ca := cmp.Or(f.ca, os.Getenv(client.EnvCA)); ca != "" {
		o, err := client.WithCA(ca)
		if err != nil {
			return nil, err
		}
		opts = append(opts, o)
	}
	return client.Dial(ctx, addr, tok, opts...)
}

func addControllerAdminCmds(parent *cobra.Command) {
	parent.AddCommand(newControllerStatusCmd(), newControllerChangeCmd("join"), newControllerChangeCmd("leave"))
}

func newControllerStatusCmd() *cobra.Command {
	var f controllerFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each controller's role, term, log index and lag (scontrol ping)",
		Long: `Asks every controller of the list on its own: its role (Leader, Follower,
Candidate; Single when it runs alone), the leader it knows, its raft term,
the last index of its log, the index it applied, and its lag behind the
leader's commit index. A controller that does not answer is shown DOWN.
Exit status 1 when no controller serves.`,
		Example: `  parity controller status --controller c1:6817,c2:6817,c3:6817`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return controllerStatus(cmd.Context(), cmd.OutOrStdout(), &f)
		},
	}
	f.bind(cmd)
	return cmd
}

func controllerStatus(ctx context.Context, out io.Writer, f *controllerFlags) error {
	addrs := client.Addrs(client.ResolveAddr(f.addr))
	type row struct {
		addr string
		st   *pb.ControllerStatus
		err  error
	}
	rows := make([]row, len(addrs))
	var commit uint64
	for i, a := range addrs {
		rows[i].addr = a
		cl, err := f.dial(ctx, a)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		rows[i].st, rows[i].err = cl.ControllerStatus(cctx)
		cancel()
		cl.Close()
		if s := rows[i].st; s != nil && s.GetServing() {
			commit = s.GetCommitIndex()
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CONTROLLER\tROLE\tSERVING\tLEADER\tTERM\tLAST_INDEX\tAPPLIED\tLAG")
	serving := false
	for _, r := range rows {
		if r.err != nil {
			fmt.Fprintf(tw, "%s\tDOWN\tno\t-\t-\t-\t-\t%s\n", r.addr, client.Message(r.err))
			continue
		}
		s := r.st
		serving = serving || s.GetServing()
		lag := "-"
		if commit > 0 {
			lag = fmt.Sprint(commit - min(commit, s.GetAppliedIndex()))
		}
		if s.GetBroken() != "" {
			lag = "stopped: " + s.GetBroken()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", r.addr, s.GetRole(), yesNo(s.GetServing()), cmp.Or(s.GetLeader(), "-"),
			s.GetTerm(), s.GetLastIndex(), s.GetAppliedIndex(), lag)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !serving {
		return fmt.Errorf("controller status: no controller of %v serves (a quorum must be up to elect a leader)", addrs)
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func newControllerChangeCmd(verb string) *cobra.Command {
	var f controllerFlags
	short := map[string]string{"join": "Add a controller to the replicated control plane (admins)",
		"leave": "Remove a controller from the replicated control plane (admins)"}[verb]
	cmd := &cobra.Command{
		Use:   verb + " HOST:PORT",
		Short: short,
		Long: short + `. The leader changes the voters; a joining
controller, started with the same cluster key and the full controllers: list,
catches up from the log or a snapshot. Remove a controller before you retire
its machine, and keep an odd number (3 or 5).`,
		Example: "  parity controller " + verb + " c4:6817 --controller c1:6817,c2:6817,c3:6817",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := f.dial(cmd.Context(), client.ResolveAddr(f.addr))
			if err != nil {
				return err
			}
			defer cl.Close()
			do := cl.JoinController
			if verb == "leave" {
				do = cl.LeaveController
			}
			st, err := do(cmd.Context(), args[0])
			if err != nil {
				return fmt.Errorf("controller %s: %s", verb, client.Message(err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "voters: %v\n", st.GetVoters())
			return nil
		},
	}
	f.bind(cmd)
	return cmd
}
