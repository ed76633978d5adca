package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
)

func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Make API tokens (admins: whoever can read the cluster key)",
	}
	var cfgPath, keyFile, user, role, nodeName, ttl string
	var slurmJWT bool
	create := &cobra.Command{
		Use:   "create --user NAME",
		Short: "Print a signed token for a user (or an agent credential for a node)",
		Long: `Signs a token with the cluster key, which lives in the controller's state
directory and is readable only by its owner: being able to read it is what
makes someone an admin. Give the token to the user, who keeps it in
~/.config/parity/token or PARITY_TOKEN. Agents get --role agent --node NAME.
With --slurm-jwt it prints SLURM_JWT=<token>, as scontrol token does: the
token is also the JWT slurmrestd clients send (X-SLURM-USER-TOKEN) to the
controller's /slurm/v0.0.44/ and /slurmdb/v0.0.44/ paths.`,
		Example: `  parity token create --user alice > /home/alice/.config/parity/token
  export $(parity token create --user alice --slurm-jwt)
  parity token create --user gpu001 --role agent --node gpu001 --ttl 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if user == "" {
				return fmt.Errorf("--user is required")
			}
			r, err := auth.ParseRole(role)
			if err != nil {
				return fmt.Errorf("--role=%s: %w", role, err)
			}
			path, defTTL := keyFile, config.DefaultTokenTTL
			if cfgPath != "" {
				c, err := config.Load(cfgPath)
				if err != nil {
					return err
				}
				if path == "" {
					path = c.Auth.KeyFile
				}
				defTTL = c.Auth.TokenTTL
			}
			if path == "" {
				path = config.DefaultStateDir + "/cluster.key"
			}
			key, err := auth.LoadKey(path)
			if err != nil {
				return fmt.Errorf("%w (only admins can read the cluster key)", err)
			}
			life := defTTL
			if ttl != "" {
				d, unlimited, err := config.ParseDuration(ttl)
				if err != nil {
					return fmt.Errorf("--ttl: %w", err)
				}
				life = d
				if unlimited || ttl == "0" {
					life = 0
				}
			}
			now := time.Now()
			c := auth.Claims{User: user, Role: r, Node: nodeName, IssuedAt: now}
			if life > 0 {
				c.Expires = now.Add(life)
			}
			tok, err := auth.Sign(key, c)
			if err != nil {
				return err
			}
			if slurmJWT {
				tok = "SLURM_JWT=" + tok
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	f := create.Flags()
	f.StringVar(&cfgPath, "config", "", "cluster file (for the key file and default lifetime)")
	f.StringVar(&keyFile, "key-file", "", "cluster key file (default: the cluster file's auth.keyFile, else /var/lib/parity/cluster.key)")
	f.StringVar(&user, "user", "", "user the token speaks for")
	f.StringVar(&role, "role", "user", "user, operator, admin or agent")
	f.StringVar(&nodeName, "node", "", "node an agent credential is bound to")
	f.StringVar(&ttl, "ttl", "", "lifetime (e.g. 30-0, 12:00:00, 90m; 0 or unlimited = never expires); default auth.tokenTTL")
	f.BoolVar(&slurmJWT, "slurm-jwt", false, "print SLURM_JWT=<token>, as scontrol token does (for slurmrestd clients)")
	cmd.AddCommand(create)
	return cmd
}
