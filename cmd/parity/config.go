package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/config"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Work with cluster configuration files",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check FILE",
		Short: "Validate a cluster file; errors name the line and field",
		Example: `  parity config check /etc/parity/cluster.yaml
  cluster.yaml:14: partitions[1].maxTime: "2-00:00:0x" is not a duration (minutes, [D-]HH:MM:SS or Go form like 30s)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := config.Load(args[0])
			if err != nil {
				var es config.Errors
				if errors.As(err, &es) {
					for _, e := range es {
						fmt.Fprintln(cmd.ErrOrStderr(), e)
					}
					return &exitError{code: 1, err: fmt.Errorf("%s: %d problem(s)", args[0], len(es))}
				}
				return err
			}
			users := 0
			for _, a := range c.Accounts {
				users += len(a.Users)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: OK — cluster %s, %d partition(s) (default %s), %d node(s), %s\n",
				args[0], c.Name, len(c.Partitions), c.DefaultPartition().Name, len(c.NodeNames()),
				joinNonEmpty(", ", fmt.Sprintf("%d account(s)", len(c.Accounts)), fmt.Sprintf("%d user association(s)", users), fmt.Sprintf("%d QOS", len(c.QOS))))
			return nil
		},
	})
	return cmd
}
