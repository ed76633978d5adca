package nvdcgm

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/parityhpc/parity/vendors/nvidia"
)

// ParseSpec reads the nvidia driver's "dcgm" setting: "off", "embedded",
// "unix:PATH" or nv-hostengine's "HOST:PORT". on is false for "off" and
// "". Errors wrap nvidia.ErrDCGMSpec.
func ParseSpec(spec string) (cfg Config, on bool, err error) {
	switch s := strings.TrimSpace(spec); {
	case s == "off" || s == "":
		return cfg, false, nil
	case s == "embedded":
		cfg.Mode = Embedded
	case strings.HasPrefix(s, "unix:"):
		path := strings.TrimPrefix(s, "unix:")
		if path == "" {
			return cfg, false, fmt.Errorf("%w: %q: unix: needs a socket path", nvidia.ErrDCGMSpec, spec)
		}
		cfg.Mode, cfg.Address, cfg.UnixSocket = Standalone, path, true
	case strings.Contains(s, ":"):
		cfg.Mode, cfg.Address = Standalone, s
	default:
		return cfg, false, fmt.Errorf("%w: %q: want off, embedded, unix:PATH or HOST:PORT", nvidia.ErrDCGMSpec, spec)
	}
	return cfg, true, nil
}

// Opener is the nvidia.DCGMOpener the in-tree registry gives the nvidia
// driver: it parses the setting and opens DCGM with the driver's logger.
func Opener(spec string, log *slog.Logger) (nvidia.DCGM, error) {
	cfg, on, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	if !on {
		return nil, fmt.Errorf("nvdcgm: %q turns DCGM off", spec)
	}
	cfg.Logger = log
	c, err := Open(cfg)
	if err != nil {
		return nil, err
	}
	return c, nil
}
