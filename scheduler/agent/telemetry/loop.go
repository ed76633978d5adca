package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// Sink receives each tick's samples. Sinks run on the loop's goroutine and
// must not block for long.
type Sink func([]gres.Sample)

// Loop samples every driver on each tick.
type Loop struct {
	// Samplers are the drivers that can sample (found by type assertion
	// on vendors.Driver).
	Samplers []vendors.Sampler
	// Sinks get every tick's merged samples.
	Sinks []Sink
	// Ticks drives the loop; nil means a ticker of Interval (default 1s).
	Ticks    <-chan time.Time
	Interval time.Duration
	// Stats, when set, records how each cycle went (for /metrics).
	Stats  *Collector
	Logger *slog.Logger
}

// Samplers returns the drivers of a list that implement vendors.Sampler.
func Samplers(drivers []vendors.Driver) []vendors.Sampler {
	var out []vendors.Sampler
	for _, d := range drivers {
		if s, ok := d.(vendors.Sampler); ok {
			out = append(out, s)
		}
	}
	return out
}

// Run samples until ctx ends; it returns ctx's error.
func (l *Loop) Run(ctx context.Context) error {
	ticks := l.Ticks
	if ticks == nil {
		iv := l.Interval
		if iv <= 0 {
			iv = time.Second
		}
		t := time.NewTicker(iv)
		defer t.Stop()
		ticks = t.C
	}
	log := l.Logger
	if log == nil {
		log = slog.Default()
	}
	var buf []gres.Sample
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case _, ok := <-ticks:
			if !ok {
				return nil
			}
		}
		var err error
		buf, err = l.Cycle(ctx, buf[:0])
		if err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("device sampling failed", "err", err)
		}
	}
}

// Cycle samples every driver once, appends the samples to buf, hands them
// to the sinks and returns them. A failing driver does not stop the others.
func (l *Loop) Cycle(ctx context.Context, buf []gres.Sample) ([]gres.Sample, error) {
	start := time.Now()
	var errs []error
	for _, s := range l.Samplers {
		got, err := s.Sample(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("telemetry: sample: %w", err))
		}
		buf = append(buf, got...)
	}
	for _, sink := range l.Sinks {
		sink(buf)
	}
	err := errors.Join(errs...)
	if l.Stats != nil {
		l.Stats.observeCycle(time.Since(start), err != nil)
	}
	return buf, err
}
