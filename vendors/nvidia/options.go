package nvidia

import (
	"log/slog"
	"maps"
	"time"

	"github.com/parityhpc/parity/healthcheck"
)

// Option configures a Driver.
type Option func(*options)

type options struct {
	root        string
	clock       func() time.Time
	logger      *slog.Logger
	hostCPUs    int
	dcgm        DCGM
	waitTimeout time.Duration
	xid         map[uint64]healthcheck.Class
	libraryPath string
}

func defaults() options {
	return options{root: "/", clock: time.Now, logger: slog.Default(), waitTimeout: 500 * time.Millisecond}
}

// WithRoot sets the directory under which /dev, /proc and /sys are read
// ("/" by default; a lab root in simulations). Device file paths in the
// inventory are joined to it, so a lab's jobs see the lab's nodes.
func WithRoot(dir string) Option {
	return func(o *options) {
		if dir != "" {
			o.root = dir
		}
	}
}

// WithClock sets the clock used to timestamp samples and conditions.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.clock = now
		}
	}
}

// WithLogger sets the logger (slog.Default by default).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithHostCPUs sets how many logical CPUs the host has, which sizes the
// CPU affinity masks NVML fills. By default it is read from
// <root>/sys/devices/system/cpu/possible, else runtime.NumCPU().
func WithHostCPUs(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.hostCPUs = n
		}
	}
}

// WithDCGM enables diagnostics above level 1 and, when d also implements
// DCGMHealthWatcher, DCGM's health watches beside the NVML events in
// WatchHealth. The driver takes ownership: Close closes it if it
// implements io.Closer.
func WithDCGM(d DCGM) Option { return func(o *options) { o.dcgm = d } }

// WithEventWait sets how long one NVML event wait blocks (500 ms by
// default); it bounds how quickly a health watcher notices cancellation.
func WithEventWait(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.waitTimeout = d
		}
	}
}

// WithXIDOverrides replaces catalogue entries for a site (e.g. treat XID
// 109 as info). Entries not named keep the built-in classification.
func WithXIDOverrides(m map[uint64]healthcheck.Class) Option {
	return func(o *options) { o.xid = maps.Clone(m) }
}

// WithLibraryPath makes NewSystem load NVML from path instead of
// libnvidia-ml.so.1. It has no effect on New.
func WithLibraryPath(path string) Option { return func(o *options) { o.libraryPath = path } }
