package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/labs/failover"
)

func newBenchFailoverCmd() *cobra.Command {
	o := failover.Options{}
	cmd := &cobra.Command{
		Use:   "failover",
		Short: "Kill the leader of three controllers mid-stream, again and again, and time the failover",
		Long: `Starts three parity controller processes on loopback (--controllers 5 for
five) replicating one cluster, streams --jobs submissions from --clients
concurrent clients holding the controllers' list, and kills the leader with
SIGKILL at a random point of each stream (seeded). Per trial it prints the
time from the kill to the next acknowledged submission, and checks the new
leader: acknowledged jobs lost, submissions that became two jobs, ids given
twice (all must be 0). The killed controller is started again and catches
up before the next trial. The summary line gives the median and worst
failover against the targets (2 s, 5 s). Exit status 1 when a promise is
broken or a trial failed.`,
		Example: `  parity bench failover
  parity bench failover --trials 5 --jobs 500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			o.Exe, o.Progress = exe, cmd.ErrOrStderr()
			trials, err := failover.Run(cmd.Context(), o)
			if werr := failover.WriteTable(cmd.OutOrStdout(), trials); werr != nil && err == nil {
				err = werr
			}
			if err != nil {
				return err
			}
			return failover.Verdict(trials)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Controllers, "controllers", 3, "controllers in the group")
	f.IntVar(&o.Trials, "trials", 20, "leader kills")
	f.IntVar(&o.Jobs, "jobs", 2000, "submissions per trial")
	f.IntVar(&o.Clients, "clients", 16, "concurrent submitting clients")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the kill points")
	f.StringVar(&o.Dir, "dir", "", "scratch directory, kept for reading the controllers' logs (default: a temporary one, removed)")
	return cmd
}
