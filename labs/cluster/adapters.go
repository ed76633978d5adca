package cluster

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/scheduler/agent"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/plugin"
)

// BuildMachine builds a template's machine as a lab node's agent finds
// it: the in-tree drivers, then the out-of-tree adapters the machine runs
// as processes, attached from the config file each names through the
// agent's own supervision (agent.AttachAdapters over vendors/plugin), as a
// site's agent attaches them. The adapters come first among the drivers
// (the accelerator's place). now, when set, is the lab's clock, which
// stamps what the adapters report; an adapter that does not attach fails
// the build, since a lab node without its accelerator proves nothing.
func BuildMachine(ctx context.Context, tmpl presets.Template, opts presets.Options, log *slog.Logger) (*presets.Machine, error) {
	m, err := tmpl.Build(ctx, opts)
	if err != nil {
		return nil, err
	}
	if len(m.Adapters) == 0 {
		return m, nil
	}
	if err := attachAdapters(ctx, m, opts.Now, log); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// BuildEmptyMachine builds a template's machine without its accelerator
// (presets.Template.BuildEmpty): an out-of-tree adapter's machine runs the
// adapter as it serves a host without its hardware, and its client over
// the socket comes first among the drivers, as the driver contract's
// empty-host check asks the adapter itself (an agent's supervision would
// stand in for its answer).
func BuildEmptyMachine(ctx context.Context, tmpl presets.Template, opts presets.Options, log *slog.Logger) (*presets.Machine, error) {
	m, err := tmpl.BuildEmpty(ctx, opts)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var clients []vendors.Driver
	for _, run := range m.Adapters {
		cfg, err := agent.LoadNodeConfig(run.ConfigFile)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("cluster: %s: %w", m.Hostname, err)
		}
		for _, p := range cfg.Plugins() {
			d, err := dialPlugin(log)(ctx, p)
			if err != nil {
				m.Close()
				return nil, fmt.Errorf("cluster: %s: adapter %s: %w", m.Hostname, p.Target, err)
			}
			clients = append(clients, d)
		}
	}
	m.Drivers = append(clients, m.Drivers...)
	return m, nil
}

func attachAdapters(ctx context.Context, m *presets.Machine, now func() time.Time, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	found, err := vendors.DiscoverAll(ctx, m.Drivers)
	if err != nil {
		return err
	}
	var plugins []agent.PluginPolicy
	for _, run := range m.Adapters {
		cfg, err := agent.LoadNodeConfig(run.ConfigFile)
		if err != nil {
			return fmt.Errorf("cluster: %s: %w", m.Hostname, err)
		}
		plugins = append(plugins, cfg.Plugins()...)
	}
	base := agent.AdapterConfig{Dial: dialPlugin(log), Logger: log.With("node", m.Hostname)}
	if now != nil {
		base.Clock, base.Stamp = labClock{now: now}, true
	}
	// Nothing kept between starts: a lab node's machine is built anew.
	_, ads, err := agent.AttachAdapters(ctx, found, plugins, base, "")
	if err != nil {
		return err
	}
	drivers := make([]vendors.Driver, 0, len(ads)+len(m.Drivers))
	for _, ad := range ads {
		drivers = append(drivers, ad)
	}
	m.Drivers = append(drivers, m.Drivers...)
	for i, ad := range ads {
		if why := ad.Unavailable(); why != "" {
			return fmt.Errorf("cluster: %s: adapter %s did not attach: %s (its log: %s)", m.Hostname, plugins[i].Target, why, m.Adapters[min(i, len(m.Adapters)-1)].Log)
		}
	}
	return nil
}

// dialPlugin connects to an adapter with its policy's timeouts, as the
// agent's command does.
func dialPlugin(log *slog.Logger) agent.Dialer {
	return func(ctx context.Context, p agent.PluginPolicy) (vendors.Driver, error) {
		return plugin.Dial(ctx, p.Target, plugin.WithHandshakeTimeout(p.ConnectTimeout), plugin.WithCallTimeout(p.CallTimeout),
			plugin.WithLogger(log), plugin.WithClientName("parity-lab-agent"))
	}
}

// labClock is the lab's time for stamps, the host's for waiting: an
// adapter's probes and reconnects take real time whatever the lab's clock
// says.
type labClock struct{ now func() time.Time }

func (c labClock) Now() time.Time { return c.now() }
func (labClock) AfterFunc(d time.Duration, f func()) launch.Timer {
	return launch.RealClock().AfterFunc(d, f)
}

// adapterFinder finds adapters' executables once per lab: where
// presets.FindAdapter looks, else built from this module's source when
// the lab runs inside its checkout (go run ./cmd/parity conform), into
// the lab's directory.
type adapterFinder struct {
	dir   string
	mu    sync.Mutex
	found map[string]string
}

func newAdapterFinder(dir string) *adapterFinder {
	return &adapterFinder{dir: filepath.Join(dir, "bin"), found: map[string]string{}}
}

func (f *adapterFinder) find(ctx context.Context, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.found[name]; ok {
		return p, nil
	}
	p, err := presets.FindAdapter(ctx, name)
	if err != nil {
		var berr error
		if p, berr = buildAdapter(ctx, name, f.dir); berr != nil {
			return "", fmt.Errorf("%w; nor could the lab build it: %w", err, berr)
		}
	}
	f.found[name] = p
	return p, nil
}

// module is this repository's module path; an adapter kept in it lives
// under cmd/NAME.
const module = "github.com/parityhpc/parity"

// buildAdapter builds cmd/NAME of this module into dir with the go
// command, when the working directory is inside the module's checkout.
func buildAdapter(ctx context.Context, name, dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(filepath.Join(root, "cmd", name)); err != nil || !st.IsDir() {
		return "", fmt.Errorf("no cmd/%s under %s", name, root)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/"+name)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s: %w: %s", name, err, bytes.TrimSpace(b))
	}
	return out, nil
}

// moduleRoot finds this module's checkout above the working directory.
func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for ; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			if bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+module+"\n")) {
				return d, nil
			}
			return "", fmt.Errorf("the working directory is in another module (%s)", d)
		}
		if d == filepath.Dir(d) {
			return "", fmt.Errorf("the working directory is not inside %s's checkout", module)
		}
	}
}
