package amd

import (
	"context"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/parityhpc/parity/vendors"
)

// Settings is the amd driver's configuration block.
type Settings struct {
	// Root is where /sys, /dev and /proc are read (the agent's root, "/"
	// on a real host, by default).
	Root string `json:"root,omitempty"`
	// PollInterval is how often the health watcher reads RAS counters
	// and hwmon ("30s" by default).
	PollInterval string `json:"pollInterval,omitempty"`
	// CEBurst is how many new correctable errors within one poll make a
	// warning (10 by default).
	CEBurst uint64 `json:"ceBurst,omitempty"`
}

// Registration registers the amd driver under the name "amd".
func Registration() vendors.Registration {
	return vendors.Registration{Name: "amd", Summary: "AMD Instinct GPUs on the amdgpu kernel driver (sysfs, KFD)", New: newFromSettings}
}

func newFromSettings(_ context.Context, env vendors.Env, raw json.RawMessage) (vendors.Driver, error) {
	var s Settings
	if err := vendors.DecodeSettings("amd", raw, &s); err != nil {
		return nil, err
	}
	iv, err := vendors.SettingsDuration("amd", "pollInterval", s.PollInterval, 30*time.Second)
	if err != nil {
		return nil, err
	}
	root := env.Root
	if s.Root != "" {
		root = filepath.Clean(s.Root)
	}
	opts := []Option{WithPollInterval(iv)}
	if env.Logger != nil {
		opts = append(opts, WithLogger(env.Logger))
	}
	if s.CEBurst > 0 {
		opts = append(opts, WithCEBurst(s.CEBurst))
	}
	return New(root, opts...), nil
}
