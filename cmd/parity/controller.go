package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/scheduler/store"
)

func newControllerCmd() *cobra.Command {
	var cfgPath, listen, stateDir, metricsAddr, addrFile, logLevel, ledgerPath, tlsCert, tlsKey, advertise, reportsDir string
	var listenFD int
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the controller: the cluster's state, gRPC API and scheduler (the slurmctld role)",
		Long: `Runs the controller daemon described by a cluster file. It keeps jobs, nodes
and the decision log in an embedded store under the state directory (every
submission is durable before it is acknowledged), serves the gRPC API that
the command line and the node agents use, and schedules on events and on
an interval. The same address (and TLS certificate) also takes submissions
as JSON over HTTP/1.x, POST /v1/jobs with "Authorization: Bearer TOKEN",
which parity-sbatch uses. The cluster key for tokens is created in the
state directory on first start.

With several controllers (cluster.yaml's controllers: list, 3 or 5), each
runs this command with the same cluster key (copy cluster.key into every
state directory); they elect a leader, which alone schedules and serves,
and every change is acknowledged once a majority holds it. The others
answer with the leader's address. See "parity controller status".`,
		Example: `  parity controller --config /etc/parity/cluster.yaml
  parity controller --config cluster.yaml --listen 127.0.0.1:0 --address-file /run/parity/addr`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(cfgPath)
			if err != nil {
				return err
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level=%s: %w", logLevel, err)
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			ctx := cmd.Context()
			dir := stateDir
			if dir == "" {
				dir = cfg.Controller.StateDir
			}
			opts := controller.Options{Config: cfg, Listen: listen, StateDir: stateDir, MetricsAddr: metricsAddr, Logger: log, Version: version,
				TLSCert: tlsCert, TLSKey: tlsKey, Advertise: advertise, ReportsDir: reportsDir,
				LoadConfig: func() (*config.Cluster, error) { return config.Load(cfgPath) }}
			if listenFD > 0 {
				l, err := inheritedListener(listenFD)
				if err != nil {
					return err
				}
				opts.Listener = l
			}
			if ledgerPath != "off" {
				if ledgerPath == "" {
					ledgerPath = filepath.Join(dir, "accounting.db")
				}
				if err := os.MkdirAll(filepath.Dir(ledgerPath), 0o700); err != nil {
					return err
				}
				db, err := store.OpenSQLite(ctx, ledgerPath, store.Options{Logger: log})
				if err != nil {
					return fmt.Errorf("--ledger: %w", err)
				}
				// The spool keeps every record through a database outage.
				spooled, err := store.NewSpooled(db, ledgerPath+".spool", store.SpoolOptions{Logger: log})
				if err != nil {
					db.Close()
					return fmt.Errorf("--ledger: %w", err)
				}
				opts.Ledger = spooled
			}
			c, err := controller.New(opts)
			if err != nil {
				if opts.Ledger != nil {
					opts.Ledger.Close()
				}
				return err
			}
			if err := c.Start(ctx); err != nil {
				c.Close()
				return err
			}
			if addrFile != "" {
				if err := writeFileAtomic(addrFile, c.Addr()+"\n"); err != nil {
					c.Close()
					return err
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "parity controller %s listening on %s\n", cfg.Name, c.Addr())
			<-ctx.Done()
			return c.Close()
		},
	}
	addControllerAdminCmds(cmd)
	f := cmd.Flags()
	f.StringVar(&cfgPath, "config", "/etc/parity/cluster.yaml", "cluster configuration file")
	f.StringVar(&listen, "listen", "", "API address (overrides controller.listen; host:0 picks a free port)")
	f.StringVar(&stateDir, "state-dir", "", "state directory (overrides controller.stateDir)")
	f.StringVar(&metricsAddr, "metrics-addr", "", `Prometheus /metrics address (overrides controller.metrics; "off" disables)`)
	f.StringVar(&addrFile, "address-file", "", "write the API's actual address to this file once listening")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&tlsCert, "tls-cert", "", "PEM certificate the API serves TLS with (with --tls-key; clients pass --ca or $PARITY_CA)")
	f.StringVar(&tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	f.StringVar(&advertise, "advertise", "", "this controller's entry in controllers: (default: --listen or controller.listen)")
	f.IntVar(&listenFD, "listen-fd", 0, "serve the listening socket inherited as this file descriptor instead of --listen (a supervisor or lab that chose the port)")
	f.StringVar(&ledgerPath, "ledger", "", `accounting ledger (SQLite; default <state dir>/accounting.db, "off" disables)`)
	f.StringVar(&reportsDir, "reports-dir", "", "conformance reports directory (parity conform --out or --history): GET /parity/v1/conformance/latest answers the newest")
	return cmd
}

// inheritedListener is the listening socket a parent passed as file
// descriptor fd: the lab opens its controllers' ports itself, so the
// controllers: list names ports no other process can take meanwhile.
func inheritedListener(fd int) (net.Listener, error) {
	f := os.NewFile(uintptr(fd), "listen-fd")
	if f == nil {
		return nil, fmt.Errorf("--listen-fd=%d: not an open file descriptor", fd)
	}
	defer f.Close()
	l, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("--listen-fd=%d: %w", fd, err)
	}
	return l, nil
}

// writeFileAtomic writes through a temporary file and a rename, so a
// reader never sees a partial address.
func writeFileAtomic(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// joinNonEmpty joins the non-empty strings.
func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
