package cpu

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/parityhpc/parity/vendors"
)

// Settings is the cpu driver's configuration block.
type Settings struct {
	// Root is where /sys and /proc are read (the agent's root by default).
	Root string `json:"root,omitempty"`
	// Hostname overrides the host name the driver reports.
	Hostname string `json:"hostname,omitempty"`
}

// Registration registers the cpu driver under the name "cpu".
func Registration() vendors.Registration {
	return vendors.Registration{Name: "cpu", Summary: "the host's CPUs, memory and NUMA domains", New: newFromSettings}
}

func newFromSettings(_ context.Context, env vendors.Env, raw json.RawMessage) (vendors.Driver, error) {
	var s Settings
	if err := vendors.DecodeSettings("cpu", raw, &s); err != nil {
		return nil, err
	}
	root := env.Root
	if s.Root != "" {
		root = filepath.Clean(s.Root)
	}
	var opts []Option
	if root != "/" {
		opts = append(opts, WithChroot(root))
	}
	if s.Hostname != "" {
		opts = append(opts, WithHostname(s.Hostname))
	}
	if env.Logger != nil {
		opts = append(opts, WithLogger(env.Logger))
	}
	return New(opts...), nil
}
