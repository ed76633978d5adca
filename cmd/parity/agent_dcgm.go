package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/parityhpc/parity/vendors/nvidia"
	"github.com/parityhpc/parity/vendors/nvidia/nvdcgm"
)

// defaultDCGM is where nv-hostengine listens by default.
const defaultDCGM = "localhost:5555"

// dcgmConfig reads --dcgm: "off", "embedded", "unix:PATH" or "HOST:PORT".
// ok is false for "off".
func dcgmConfig(spec string) (cfg nvdcgm.Config, ok bool, err error) {
	switch s := strings.TrimSpace(spec); {
	case s == "off" || s == "":
		return cfg, false, nil
	case s == "embedded":
		cfg.Mode = nvdcgm.Embedded
	case strings.HasPrefix(s, "unix:"):
		path := strings.TrimPrefix(s, "unix:")
		if path == "" {
			return cfg, false, fmt.Errorf("--dcgm=%q: unix: needs a socket path", spec)
		}
		cfg.Mode, cfg.Address, cfg.UnixSocket = nvdcgm.Standalone, path, true
	case strings.Contains(s, ":"):
		cfg.Mode, cfg.Address = nvdcgm.Standalone, s
	default:
		return cfg, false, fmt.Errorf("--dcgm=%q: want off, embedded, unix:PATH or HOST:PORT", spec)
	}
	return cfg, true, nil
}

// dcgmOptions opens DCGM for the NVIDIA driver: diagnostics above level 1
// and DCGM health watches. Where libdcgm or the host engine is absent it
// says so and returns no option — the driver runs on NVML alone.
func dcgmOptions(cfg nvdcgm.Config, log *slog.Logger) []nvidia.Option {
	cfg.Logger = log
	c, err := nvdcgm.Open(cfg)
	if err != nil {
		log.Info("DCGM not available: NVIDIA diagnostics above level 1 and DCGM health watches are off", "err", err)
		return nil
	}
	return []nvidia.Option{nvidia.WithDCGM(c)}
}
