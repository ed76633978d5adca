package nvidia

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/parityhpc/parity/vendors"
)

// DefaultDCGM is where nv-hostengine listens by default.
const DefaultDCGM = "localhost:5555"

// ErrDCGMSpec is wrapped by a DCGMOpener for a "dcgm" setting it cannot read.
var ErrDCGMSpec = errors.New("nvidia: invalid dcgm setting")

// DCGMOpener opens DCGM as the "dcgm" setting names it ("embedded",
// "unix:PATH" or nv-hostengine's "HOST:PORT"; never "off"). The driver
// package cannot open DCGM itself (vendors/nvidia/nvdcgm imports it), so
// the composition root passes nvdcgm's opener to Registration.
type DCGMOpener func(spec string, log *slog.Logger) (DCGM, error)

// Settings is the nvidia driver's configuration block.
type Settings struct {
	// Root is where /dev, /proc and /sys are read (the agent's root by default).
	Root string `json:"root,omitempty"`
	// Library loads NVML from this path instead of libnvidia-ml.so.1.
	Library string `json:"library,omitempty"`
	// DCGM enables diagnostics above level 1 and DCGM health watches:
	// "off", "embedded", "unix:PATH" or "HOST:PORT" (DefaultDCGM by
	// default). Where libdcgm or the host engine is absent the driver
	// runs on NVML alone and says so.
	DCGM *string `json:"dcgm,omitempty"`
	// EventWait bounds one NVML event wait ("500ms" by default).
	EventWait string `json:"eventWait,omitempty"`
}

// Registration registers the nvidia driver under the name "nvidia". open
// may be nil: DCGM is then never used.
func Registration(open DCGMOpener) vendors.Registration {
	return vendors.Registration{
		Name: "nvidia", Summary: "NVIDIA GPUs through NVML, with DCGM for diagnostics and health watches",
		New: func(ctx context.Context, env vendors.Env, raw json.RawMessage) (vendors.Driver, error) {
			return newFromSettings(ctx, env, raw, open)
		},
		DeprecatedFlags: []vendors.DeprecatedFlag{{Flag: "dcgm", Field: "dcgm", Default: DefaultDCGM,
			Usage: `deprecated: set "dcgm" in the nvidia driver's settings`}},
	}
}

func newFromSettings(_ context.Context, env vendors.Env, raw json.RawMessage, open DCGMOpener) (vendors.Driver, error) {
	var s Settings
	if err := vendors.DecodeSettings("nvidia", raw, &s); err != nil {
		return nil, err
	}
	wait, err := vendors.SettingsDuration("nvidia", "eventWait", s.EventWait, defaults().waitTimeout)
	if err != nil {
		return nil, err
	}
	log := env.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	root := env.Root
	if s.Root != "" {
		root = filepath.Clean(s.Root)
	}
	opts := []Option{WithRoot(root), WithLogger(log), WithEventWait(wait)}
	if s.Library != "" {
		opts = append(opts, WithLibraryPath(s.Library))
	}
	spec := DefaultDCGM
	if s.DCGM != nil {
		spec = strings.TrimSpace(*s.DCGM)
	}
	if spec != "off" && spec != "" && open != nil {
		d, err := open(spec, log)
		switch {
		case errors.Is(err, ErrDCGMSpec):
			return nil, fmt.Errorf("%w: driver nvidia: field dcgm: %w", vendors.ErrSettings, err)
		case err != nil:
			log.Info("DCGM not available: NVIDIA diagnostics above level 1 and DCGM health watches are off", "dcgm", spec, "err", err)
		default:
			opts = append(opts, WithDCGM(d))
		}
	}
	return NewSystem(opts...), nil
}
