package agentcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/agent"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/plugin"
)

// deprecatedFlag is one driver's old agent flag, kept as a hidden alias.
type deprecatedFlag struct {
	driver string
	flag   vendors.DeprecatedFlag
	value  *string
}

// declareDeprecatedFlags adds every registered driver's old flags to the
// agent command, hidden: the agent's visible flags name no vendor, and a
// site's old command line keeps working.
func declareDeprecatedFlags(cmd *cobra.Command, reg *vendors.Registry) []deprecatedFlag {
	var out []deprecatedFlag
	for _, r := range reg.Registrations() {
		for _, df := range r.DeprecatedFlags {
			v := new(string)
			cmd.Flags().StringVar(v, df.Flag, df.Default, df.Usage)
			_ = cmd.Flags().MarkHidden(df.Flag)
			out = append(out, deprecatedFlag{driver: r.Name, flag: df, value: v})
		}
	}
	return out
}

// applyDeprecatedFlags writes each deprecated flag given on the command
// line into its driver's settings block (adding the driver's entry when
// the configuration lists every driver by default), warning once per
// flag. A flag that sets a field the configuration file sets too is an
// error: two sources for one setting would leave one silently ignored.
func applyDeprecatedFlags(cmd *cobra.Command, flags []deprecatedFlag, entries []vendors.Entry, log *slog.Logger) ([]vendors.Entry, error) {
	for _, df := range flags {
		if !cmd.Flags().Changed(df.flag.Flag) {
			continue
		}
		log.Warn("deprecated flag: set it in the driver's settings in the agent's config file", "flag", "--"+df.flag.Flag,
			"driver", df.driver, "field", df.flag.Field)
		i := -1
		for j, e := range entries {
			if e.Name == df.driver {
				i = j
			}
		}
		if i < 0 {
			// A flag for a driver the configuration leaves out has nothing to set.
			log.Warn("deprecated flag ignored: its driver is not configured", "flag", "--"+df.flag.Flag, "driver", df.driver)
			continue
		}
		block := map[string]any{}
		if len(entries[i].Settings) > 0 {
			if err := json.Unmarshal(entries[i].Settings, &block); err != nil {
				return nil, fmt.Errorf("--%s: driver %s: settings: %w", df.flag.Flag, df.driver, err)
			}
		}
		if _, set := block[df.flag.Field]; set {
			return nil, fmt.Errorf("--%s and the config file's drivers entry %s both set %q: keep the config file's",
				df.flag.Flag, df.driver, df.flag.Field)
		}
		block[df.flag.Field] = *df.value
		b, err := json.Marshal(block)
		if err != nil {
			return nil, err
		}
		entries[i].Settings = b
	}
	return entries, nil
}

// registryDrivers builds this host's in-tree drivers from the registry:
// the config file's entries, or every registered driver with its defaults
// when the file lists no driver at all, the deprecated flags mapped into
// their blocks. The drivers log through the agent's logger, so a skipped
// library or an unregistered device shows in the agent's log.
func registryDrivers(ctx context.Context, log *slog.Logger, o agentOptions) ([]vendors.Driver, func(), error) {
	entries := o.nodeConfig.InTree()
	if len(entries) == 0 && len(o.nodeConfig.Plugins()) == 0 {
		// No config file (or one without drivers): every in-tree driver.
		for _, name := range o.registry.Names() {
			entries = append(entries, vendors.Entry{Name: name})
		}
	}
	entries, err := o.driverFlags(entries)
	if err != nil {
		return nil, nil, err
	}
	built, err := o.registry.Build(ctx, vendors.Env{Root: "/", Logger: log}, entries)
	if err != nil {
		return nil, nil, err
	}
	for name, why := range built.Skipped {
		log.Info("driver skipped", "driver", name, "why", why)
	}
	return built.Drivers, func() { _ = vendors.CloseAll(built.Drivers) }, nil
}

// agentDrivers discovers the node: its in-tree drivers (inTreeDrivers),
// then its configured out-of-tree adapters, each supervised by the agent
// (agent.Adapter) and checked against the host and the devices the others
// own. An adapter that is not up yet is reported and supervised: the
// node starts with the devices it registered last time, drained, or
// without them, rather than not at all, and takes them when it answers.
func agentDrivers(ctx context.Context, log *slog.Logger, o agentOptions, deviceNodes bool) (vendors.Discovered, func(), error) {
	if (o.simName != "" || o.simLab != "") && len(o.nodeConfig.InTree()) > 0 {
		log.Warn("the simulated machine supplies the in-tree drivers; the config file's in-tree entries are not used",
			"entries", len(o.nodeConfig.InTree()))
	}
	drivers, closeInTree, err := inTreeDrivers(ctx, log, o, deviceNodes)
	if err != nil {
		return vendors.Discovered{}, nil, err
	}
	found, err := vendors.DiscoverAll(ctx, drivers)
	if err != nil {
		closeInTree()
		return vendors.Discovered{}, nil, err
	}
	// The spool keeps each adapter's registered inventory, so an adapter
	// absent at a restart has its devices registered drained, naming why.
	state := ""
	if o.spool != "" {
		state = filepath.Join(o.spool, "adapters")
	}
	found, adapters, err := agent.AttachAdapters(ctx, found, o.nodeConfig.Plugins(), agent.AdapterConfig{Dial: dialAdapter(log), Logger: log}, state)
	if err != nil {
		closeInTree()
		return vendors.Discovered{}, nil, err
	}
	return found, func() {
		for _, ad := range adapters {
			_ = ad.Close()
		}
		closeInTree()
	}, nil
}

// dialAdapter connects to an adapter with its policy's timeouts.
func dialAdapter(log *slog.Logger) agent.Dialer {
	return func(ctx context.Context, p agent.PluginPolicy) (vendors.Driver, error) {
		return plugin.Dial(ctx, p.Target, plugin.WithHandshakeTimeout(p.ConnectTimeout), plugin.WithCallTimeout(p.CallTimeout),
			plugin.WithLogger(log), plugin.WithClientName("parity-agent"))
	}
}
