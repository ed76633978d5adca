package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/vendors"
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

// registryDrivers builds this host's drivers from the registry: every
// registered driver with its defaults, the deprecated flags mapped into
// their blocks. The drivers log through the agent's logger, so a skipped
// library or an unregistered device shows in the agent's log.
func registryDrivers(ctx context.Context, log *slog.Logger, o agentOptions) ([]vendors.Driver, func(), error) {
	var entries []vendors.Entry
	for _, name := range o.registry.Names() {
		entries = append(entries, vendors.Entry{Name: name})
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
