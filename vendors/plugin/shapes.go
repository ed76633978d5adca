package plugin

import (
	"context"
	"errors"
	"io"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
	pb "github.com/parityhpc/parity/vendors/plugin/pluginv1"
)

// Resubscription backoff after a lost health stream.
const (
	resubscribeMin = 100 * time.Millisecond
	resubscribeMax = 5 * time.Second
)

// The optional capabilities are separate embeddable types so that the value
// Dial returns has exactly the methods the adapter implements: callers find
// capabilities by type assertion, as with in-tree drivers.
type sampler struct{ c *client }

func (s sampler) Sample(ctx context.Context) ([]gres.Sample, error) { return s.c.sample(ctx) }

type watcher struct{ c *client }

func (w watcher) WatchHealth(ctx context.Context, emit func(gres.Condition)) error {
	return w.c.watchHealth(ctx, emit)
}

type diagnoser struct{ c *client }

func (d diagnoser) Diagnose(ctx context.Context, uuid string, level int) (gres.Diagnosis, error) {
	return d.c.diagnose(ctx, uuid, level)
}

var (
	_ vendors.Driver        = (*client)(nil)
	_ Conn                  = (*client)(nil)
	_ vendors.Sampler       = sampler{}
	_ vendors.HealthWatcher = watcher{}
	_ vendors.Diagnoser     = diagnoser{}
)

// shaped wraps the client in the struct whose method set matches the
// adapter's optional methods.
func (c *client) shaped() vendors.Driver {
	s, w, d := sampler{c}, watcher{c}, diagnoser{c}
	hasS := slices.Contains(c.methods, MethodSample)
	hasW := slices.Contains(c.methods, MethodWatchHealth)
	hasD := slices.Contains(c.methods, MethodDiagnose)
	switch {
	case hasS && hasW && hasD:
		return struct {
			*client
			sampler
			watcher
			diagnoser
		}{c, s, w, d}
	case hasS && hasW:
		return struct {
			*client
			sampler
			watcher
		}{c, s, w}
	case hasS && hasD:
		return struct {
			*client
			sampler
			diagnoser
		}{c, s, d}
	case hasW && hasD:
		return struct {
			*client
			watcher
			diagnoser
		}{c, w, d}
	case hasS:
		return struct {
			*client
			sampler
		}{c, s}
	case hasW:
		return struct {
			*client
			watcher
		}{c, w}
	case hasD:
		return struct {
			*client
			diagnoser
		}{c, d}
	}
	return struct{ *client }{c}
}

// watchHealth follows the adapter's health stream until ctx is done. When
// the stream is lost because the adapter went away (stopped, restarting),
// it subscribes again once the adapter is back, so a watcher outlives
// adapter restarts; conditions raised while no adapter ran are not seen.
// It returns nil when ctx is done or the adapter's driver ended the watch,
// and the adapter's error otherwise.
func (c *client) watchHealth(ctx context.Context, emit func(gres.Condition)) error {
	backoff := resubscribeMin
	for {
		got, err := c.watchOnce(ctx, emit)
		switch {
		case ctx.Err() != nil, err == nil:
			return nil
		case !errors.Is(err, ErrUnavailable):
			return err
		}
		if got {
			backoff = resubscribeMin
		}
		c.log.Warn("plugin: health stream lost; subscribing again", "err", err, "after", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, resubscribeMax)
	}
}

// watchOnce follows one stream; got says whether it delivered anything.
func (c *client) watchOnce(ctx context.Context, emit func(gres.Condition)) (got bool, err error) {
	sctx := metadata.AppendToOutgoingContext(ctx, versionHeader, c.versionStr)
	stream, err := c.rpc.WatchHealth(sctx, &pb.WatchHealthRequest{}, grpc.WaitForReady(true))
	if err != nil {
		return false, fromStatus("watch-health", err)
	}
	for {
		cond, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, fromStatus("watch-health", err)
		}
		got = true
		emit(conditionFromPB(cond))
	}
}
