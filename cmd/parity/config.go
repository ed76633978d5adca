package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/cmd/internal/userverbs"
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
	cmd.AddCommand(newConfigExportCmd(realAcctEnv()))
	return cmd
}

// newConfigExportCmd is parity config export: the controller's run-time
// partitions, accounts and QOS written back as a cluster file.
func newConfigExportCmd(env acctEnv) *cobra.Command {
	var remote userverbs.RemoteFlags
	var base, out string
	cmd := &cobra.Command{
		Use:   "export [--base FILE] [-o FILE]",
		Short: "Write the running cluster's partitions, accounts and QOS back as a cluster file",
		Long: `Asks the controller for the state scontrol and sacctmgr changed at run time
(partitions, accounts with their users, QOS) and writes it into a cluster file:
--base FILE, or the file the controller was started from. Everything else in
the file stays as written, comments included; a controller started from the
result on a fresh state directory holds the same state. Operators and admins.`,
		Example: `  parity config export -o cluster.yaml.new
  parity config export --base /etc/parity/cluster.yaml > cluster.yaml.new`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var b []byte
			if base != "" {
				var err error
				if b, err = os.ReadFile(base); err != nil {
					return fmt.Errorf("config export: --base: %w", err)
				}
			}
			r, err := remote.Dial(cmd, "config export", env.getenv)
			if err != nil {
				return err
			}
			defer r.Close()
			text, err := r.Client.ExportConfig(r.Ctx, b)
			if err != nil {
				return r.Fail(err)
			}
			if out == "" {
				_, err = cmd.OutOrStdout().Write(text)
				return err
			}
			return os.WriteFile(out, text, 0o644)
		},
	}
	remote.Register(cmd, "the controller to export from")
	cmd.Flags().StringVar(&base, "base", "", "the cluster file to write the state into (default: the controller's own)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to FILE instead of stdout")
	return cmd
}
