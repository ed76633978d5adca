package nvdcgm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors/nvidia"
)

var (
	_ nvidia.DCGM              = (*Client)(nil)
	_ nvidia.DCGMHealthWatcher = (*Client)(nil)
)

// ErrClosed is returned by Diagnose after Close.
var ErrClosed = errors.New("nvdcgm: client closed")

// Mode is how the client reaches a DCGM host engine.
type Mode int

// Modes, as go-dcgm names them.
const (
	// Embedded runs the host engine inside this process.
	Embedded Mode = iota
	// Standalone connects to a running nv-hostengine at Config.Address.
	Standalone
	// StartHostengine starts nv-hostengine from $PATH and stops it on Close.
	StartHostengine
)

// Config selects the host engine and tunes the health watch.
type Config struct {
	Mode Mode
	// Address is "host:port", or a socket path when UnixSocket is set
	// (Standalone only).
	Address    string
	UnixSocket bool
	// HealthInterval is how often WatchHealth polls (DefaultHealthInterval
	// when zero); HealthWarmup how many first polls ignore PCIe, thermal
	// and power incidents (DefaultHealthWarmup when zero, none when
	// negative).
	HealthInterval time.Duration
	HealthWarmup   int
	// Logger (slog.Default when nil) and Now (time.Now when nil) stamp and
	// report the health watch.
	Logger *slog.Logger
	Now    func() time.Time
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.HealthInterval <= 0 {
		c.HealthInterval = DefaultHealthInterval
	}
	switch {
	case c.HealthWarmup == 0:
		c.HealthWarmup = DefaultHealthWarmup
	case c.HealthWarmup < 0:
		c.HealthWarmup = 0
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Client runs DCGM diagnostics and health watches. go-dcgm's API is
// process-global, so the client serialises its calls (a health poll waits
// for a running diagnosis); it is safe for concurrent use.
type Client struct {
	mu      sync.Mutex
	cfg     Config
	health  healthAPI
	cleanup func()
	closed  bool
}

// Open initialises DCGM. It fails (without side effects to undo) when
// libdcgm.so cannot be loaded or the host engine cannot be reached.
func Open(cfg Config) (*Client, error) {
	var args []string
	var mode = dcgm.Embedded
	switch cfg.Mode {
	case Embedded:
	case Standalone:
		if cfg.Address == "" {
			return nil, fmt.Errorf("nvdcgm: standalone mode needs an address")
		}
		socket := "0"
		if cfg.UnixSocket {
			socket = "1"
		}
		mode, args = dcgm.Standalone, []string{cfg.Address, socket}
	case StartHostengine:
		mode = dcgm.StartHostengine
	default:
		return nil, fmt.Errorf("nvdcgm: mode %d is not embedded, standalone or start-hostengine", cfg.Mode)
	}
	cleanup, err := dcgm.Init(mode, args...)
	if err != nil {
		// Only the cleanup of a successful Init may shut DCGM down.
		return nil, fmt.Errorf("nvdcgm: DCGM unavailable: %w", err)
	}
	return &Client{cfg: cfg.withDefaults(), health: goDCGM{}, cleanup: cleanup}, nil
}

// Close releases this client's DCGM reference. Closing twice is a no-op.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		c.cleanup()
	}
	return nil
}

// Diagnose runs DCGM diagnostics at level 1–4 on the GPU with the UUID.
// DCGM cannot be interrupted: when ctx ends first Diagnose returns
// ctx.Err() and the run finishes in the background (Close waits for it).
func (c *Client) Diagnose(ctx context.Context, uuid string, level int) ([]gres.DiagnosisTest, error) {
	if level < 1 || level > 4 {
		return nil, fmt.Errorf("nvdcgm: diagnose %s: level %d is outside 1..4", uuid, level)
	}
	type result struct {
		tests []gres.DiagnosisTest
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		tests, err := c.diagnose(uuid, level)
		ch <- result{tests, err}
	}()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("nvdcgm: diagnose %s: %w", uuid, ctx.Err())
	case r := <-ch:
		return r.tests, r.err
	}
}

func (c *Client) diagnose(uuid string, level int) ([]gres.DiagnosisTest, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	id, err := gpuID(uuid)
	if err != nil {
		return nil, err
	}
	group, err := dcgm.CreateGroup("parity-diag-" + uuid)
	if err != nil {
		return nil, fmt.Errorf("nvdcgm: diagnose %s: %w", uuid, err)
	}
	defer func() { _ = dcgm.DestroyGroup(group) }()
	if err := dcgm.AddToGroup(group, id); err != nil {
		return nil, fmt.Errorf("nvdcgm: diagnose %s: %w", uuid, err)
	}
	res, err := dcgm.RunDiag(dcgm.DiagType(level), group)
	if err != nil {
		return nil, fmt.Errorf("nvdcgm: diagnose %s level %d: %w", uuid, level, err)
	}
	return convert(res, id), nil
}

// gpuID maps an NVML UUID to DCGM's GPU id (they are different spaces).
func gpuID(uuid string) (uint, error) {
	ids, err := dcgm.GetSupportedDevices()
	if err != nil {
		return 0, fmt.Errorf("nvdcgm: list GPUs: %w", err)
	}
	for _, id := range ids {
		info, err := dcgm.GetDeviceInfo(id)
		if err == nil && info.UUID == uuid {
			return id, nil
		}
	}
	return 0, fmt.Errorf("nvdcgm: DCGM does not manage GPU %s", uuid)
}

// convert keeps the software tests and the tests of GPU id that ran. A
// test passes unless DCGM says "fail"; "warn" and "skipped" pass with a
// note, "notrun" (not part of the level) is dropped.
func convert(res dcgm.DiagResults, id uint) []gres.DiagnosisTest {
	var out []gres.DiagnosisTest
	add := func(rs []dcgm.DiagResult) {
		for _, r := range rs {
			if r.Status == "" || r.Status == "notrun" {
				continue
			}
			t := gres.DiagnosisTest{Name: r.TestName, Passed: r.Status != "fail"}
			switch {
			case r.ErrorMessage != "":
				t.Message = fmt.Sprintf("%s: %s", r.Status, r.ErrorMessage)
			case r.Status != "pass":
				t.Message = r.Status
			}
			out = append(out, t)
		}
	}
	add(res.Software)
	for _, g := range res.PerGpu {
		if g.GPU == id {
			add(g.DiagResults)
		}
	}
	return out
}
