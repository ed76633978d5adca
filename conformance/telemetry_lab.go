package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/parityhpc/parity/scheduler/agent/telemetry"
	"github.com/parityhpc/parity/vendors"
)

// MetricsSource is implemented by targets that can read a node agent's
// Prometheus telemetry (the /metrics page `parity agent --metrics-addr`
// serves) as text.
type MetricsSource interface {
	Metrics(ctx context.Context, node string) (string, error)
}

var _ MetricsSource = (*LabTarget)(nil)

// Metrics builds the node agent's telemetry collector as `parity agent`
// does (its inventory, its job runtime's device holders), feeds it one
// round of samples from the node's own drivers, and reads its /metrics
// page over HTTP. The lab's in-process agents serve no metrics listener
// of their own; the collector and the drivers are the ones they run.
func (t *LabTarget) Metrics(ctx context.Context, node string) (string, error) {
	n, err := t.node(node)
	if err != nil {
		return "", err
	}
	opts := telemetry.CollectorOptions{Hostname: node}
	if n.Runtime != nil {
		opts.Holders = n.Runtime.Holders
		opts.Running = func() int { return len(n.Runtime.Running()) }
	}
	col := telemetry.NewCollector(n.Inventory, opts)
	for _, d := range n.Machine.Drivers {
		s, ok := d.(vendors.Sampler)
		if !ok {
			continue
		}
		samples, err := s.Sample(ctx)
		if err != nil {
			return "", fmt.Errorf("conformance: sample %s's %s driver: %w", node, d.Info().Name, err)
		}
		col.Observe(samples)
	}
	srv := httptest.NewServer(col.Handler())
	defer srv.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		return "", fmt.Errorf("conformance: read %s's metrics: %w", node, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("conformance: read %s's metrics: status %s: %v", node, resp.Status, err)
	}
	return string(b), nil
}
