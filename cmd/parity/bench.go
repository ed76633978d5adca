package main

import (
	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/core"
)

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure Parity's own performance and print a table",
	}
	var quick bool
	sched := &cobra.Command{
		Use:   "sched",
		Short: "Time one full scheduling pass (priority, placement, EASY backfill) over synthetic queues",
		Long: `Builds seeded synthetic clusters — 10k pending jobs on 1,000 nodes × 8 GPUs and
100k pending jobs on 10,000 nodes × 8 GPUs, mixed sizes from 1 GPU to 64-node
jobs, thousands running — and measures one full pass of the scheduling core:
milliseconds per pass, bytes allocated per pending job, allocations per pass,
and whether the targets (20 ms / 300 ms, 1 KiB per pending job) are met.
Times are wall clock: run it on a quiet machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sizes := core.DefaultBenchSizes()
			if quick {
				sizes = sizes[:1]
			}
			return core.BenchTable(cmd.OutOrStdout(), sizes...)
		},
	}
	sched.Flags().BoolVar(&quick, "quick", false, "only the 10k-job scenario")
	cmd.AddCommand(sched, newBenchFailoverCmd())
	return cmd
}
