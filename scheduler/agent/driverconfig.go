package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/parityhpc/parity/vendors"
)

// NodeConfig is the agent's config file: what this node runs, as the
// site wrote it. Today it holds the node's drivers.
//
//	drivers:
//	  - name: cpu                       # an in-tree driver...
//	    settings: {hostname: n1}        # ...with its own block
//	  - plugin: unix:///run/parity/acme.sock   # an out-of-tree adapter
//	    connectTimeout: 10s
//	    callTimeout: 5s
//	    probeInterval: 10s
//	    reconnect: {min: 1s, max: 1m}
//	    flap: {restarts: 5, window: 10m}
type NodeConfig struct {
	Drivers []DriverEntry
}

// DriverEntry is one configured driver: an in-tree one by registered Name
// with its Settings block, or an out-of-tree adapter at Plugin.
type DriverEntry struct {
	Name     string
	Settings json.RawMessage
	Plugin   PluginPolicy
	// Line is where the entry starts in the file, for messages.
	Line int
}

// IsPlugin reports whether the entry is an out-of-tree adapter.
func (e DriverEntry) IsPlugin() bool { return e.Plugin.Target != "" }

// PluginPolicy is how the agent attaches one adapter and keeps it.
type PluginPolicy struct {
	// Target is the adapter's socket, "unix:///run/parity/NAME.sock".
	Target string
	// ConnectTimeout bounds a connection and its handshake (default 10s).
	ConnectTimeout time.Duration
	// CallTimeout bounds every call; an adapter that takes longer is
	// hung and treated as gone (default 5s).
	CallTimeout time.Duration
	// ProbeInterval is how often the agent asks the adapter for its
	// inventory, which is both its liveness check and how a changed
	// inventory is seen (default 10s).
	ProbeInterval time.Duration
	// ReconnectMin and ReconnectMax bound the backoff between attempts to
	// reach a gone adapter (default 1s, 1m).
	ReconnectMin, ReconnectMax time.Duration
	// FlapRestarts losses of the adapter within FlapWindow make it
	// flapping: its devices are drained naming the adapter and the count,
	// and held (their diagnosis fails) until it has run FlapWindow without
	// a loss (default 5 within 10m).
	FlapRestarts int
	FlapWindow   time.Duration
}

// withDefaults fills the zero durations.
func (p PluginPolicy) withDefaults() PluginPolicy {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&p.ConnectTimeout, 10*time.Second)
	def(&p.CallTimeout, 5*time.Second)
	def(&p.ProbeInterval, 10*time.Second)
	def(&p.ReconnectMin, time.Second)
	def(&p.ReconnectMax, time.Minute)
	def(&p.FlapWindow, 10*time.Minute)
	if p.FlapRestarts <= 0 {
		p.FlapRestarts = 5
	}
	p.ReconnectMax = max(p.ReconnectMax, p.ReconnectMin)
	return p
}

// InTree returns the in-tree entries as the registry builds them.
func (c NodeConfig) InTree() []vendors.Entry {
	var out []vendors.Entry
	for _, e := range c.Drivers {
		if !e.IsPlugin() {
			out = append(out, vendors.Entry{Name: e.Name, Settings: e.Settings})
		}
	}
	return out
}

// Plugins returns the out-of-tree adapters' policies, defaults filled.
func (c NodeConfig) Plugins() []PluginPolicy {
	var out []PluginPolicy
	for _, e := range c.Drivers {
		if e.IsPlugin() {
			out = append(out, e.Plugin.withDefaults())
		}
	}
	return out
}

// LoadNodeConfig reads the agent's config file.
func LoadNodeConfig(path string) (NodeConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return NodeConfig{}, fmt.Errorf("agent config: %w", err)
	}
	return ParseNodeConfig(path, b)
}

// rawEntry is a drivers entry as written; settings stay a node, decoded
// by the driver itself.
type rawEntry struct {
	Name           string    `yaml:"name"`
	Settings       yaml.Node `yaml:"settings"`
	Plugin         string    `yaml:"plugin"`
	ConnectTimeout string    `yaml:"connectTimeout"`
	CallTimeout    string    `yaml:"callTimeout"`
	ProbeInterval  string    `yaml:"probeInterval"`
	Reconnect      struct {
		Min string `yaml:"min"`
		Max string `yaml:"max"`
	} `yaml:"reconnect"`
	Flap *struct {
		Restarts int    `yaml:"restarts"`
		Window   string `yaml:"window"`
	} `yaml:"flap"`
}

// ParseNodeConfig parses a config file's bytes; name prefixes messages,
// which also name the line and the entry. Unknown keys are refused.
func ParseNodeConfig(name string, data []byte) (NodeConfig, error) {
	var raw struct {
		Drivers []yaml.Node `yaml:"drivers"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return NodeConfig{}, fmt.Errorf("%s: %w", name, err)
	}
	var out NodeConfig
	for i, node := range raw.Drivers {
		e, err := parseEntry(&node)
		if err != nil {
			return NodeConfig{}, fmt.Errorf("%s:%d: drivers[%d]: %w", name, node.Line, i, err)
		}
		e.Line = node.Line
		for j, prev := range out.Drivers {
			if e.IsPlugin() && prev.Plugin.Target == e.Plugin.Target {
				return NodeConfig{}, fmt.Errorf("%s:%d: drivers[%d]: plugin %s is attached by drivers[%d] already", name, node.Line, i, e.Plugin.Target, j)
			}
		}
		out.Drivers = append(out.Drivers, e)
	}
	return out, nil
}

func parseEntry(node *yaml.Node) (DriverEntry, error) {
	var r rawEntry
	// Node.Decode does not refuse unknown keys; a strict decoder over the
	// entry's own text does.
	text, err := yaml.Marshal(node)
	if err != nil {
		return DriverEntry{}, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		return DriverEntry{}, entryError(err, node.Line)
	}
	switch {
	case r.Name != "" && r.Plugin != "":
		return DriverEntry{}, fmt.Errorf("name %q and plugin %q: an entry is an in-tree driver or an adapter, not both", r.Name, r.Plugin)
	case r.Name == "" && r.Plugin == "":
		return DriverEntry{}, errors.New("give name (an in-tree driver) or plugin (an adapter's unix:///path.sock)")
	case r.Name != "":
		if r.ConnectTimeout != "" || r.CallTimeout != "" || r.ProbeInterval != "" || r.Reconnect.Min != "" || r.Reconnect.Max != "" || r.Flap != nil {
			return DriverEntry{}, fmt.Errorf("driver %s: timeouts, reconnect and flap apply to plugin entries only", r.Name)
		}
		settings, err := settingsJSON(&r.Settings)
		if err != nil {
			return DriverEntry{}, fmt.Errorf("driver %s: settings: %w", r.Name, err)
		}
		return DriverEntry{Name: r.Name, Settings: settings}, nil
	}
	return parsePluginEntry(r)
}

// entryLine finds the line numbers yaml puts in its messages.
var entryLine = regexp.MustCompile(`line (\d+): `)

// entryError rewrites a strict decode's message about one entry's text so
// it names the file's lines and no Go type.
func entryError(err error, first int) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, " in type agent.rawEntry", "")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	msg = entryLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(entryLine.FindStringSubmatch(m)[1])
		return fmt.Sprintf("line %d: ", first+n-1)
	})
	return errors.New(msg)
}

func parsePluginEntry(r rawEntry) (DriverEntry, error) {
	if !r.Settings.IsZero() {
		return DriverEntry{}, fmt.Errorf("plugin %s: settings belong to the adapter's own configuration, not the agent's", r.Plugin)
	}
	if !strings.HasPrefix(r.Plugin, "unix://") {
		return DriverEntry{}, fmt.Errorf("plugin %q: want unix:///path.sock", r.Plugin)
	}
	p := PluginPolicy{Target: r.Plugin}
	fields := []struct {
		name, value string
		into        *time.Duration
	}{{"connectTimeout", r.ConnectTimeout, &p.ConnectTimeout}, {"callTimeout", r.CallTimeout, &p.CallTimeout},
		{"probeInterval", r.ProbeInterval, &p.ProbeInterval}, {"reconnect.min", r.Reconnect.Min, &p.ReconnectMin},
		{"reconnect.max", r.Reconnect.Max, &p.ReconnectMax}}
	for _, f := range fields {
		if f.value == "" {
			continue
		}
		d, err := time.ParseDuration(f.value)
		if err != nil || d <= 0 {
			return DriverEntry{}, fmt.Errorf("plugin %s: %s: %q is not a positive duration such as \"10s\"", r.Plugin, f.name, f.value)
		}
		*f.into = d
	}
	if p.ReconnectMin > 0 && p.ReconnectMax > 0 && p.ReconnectMax < p.ReconnectMin {
		return DriverEntry{}, fmt.Errorf("plugin %s: reconnect.max %v is below reconnect.min %v", r.Plugin, p.ReconnectMax, p.ReconnectMin)
	}
	if f := r.Flap; f != nil {
		if f.Restarts < 1 {
			return DriverEntry{}, fmt.Errorf("plugin %s: flap.restarts: %d is not a count of at least 1", r.Plugin, f.Restarts)
		}
		p.FlapRestarts = f.Restarts
		if f.Window != "" {
			d, err := time.ParseDuration(f.Window)
			if err != nil || d <= 0 {
				return DriverEntry{}, fmt.Errorf("plugin %s: flap.window: %q is not a positive duration such as \"10m\"", r.Plugin, f.Window)
			}
			p.FlapWindow = d
		}
	}
	return DriverEntry{Plugin: p}, nil
}

// settingsJSON turns a settings node into the JSON block the driver
// decodes; an absent block is nil (the driver's defaults).
func settingsJSON(node *yaml.Node) (json.RawMessage, error) {
	if node.IsZero() {
		return nil, nil
	}
	if node.Kind != yaml.MappingNode {
		return nil, errors.New("want a mapping of the driver's fields")
	}
	var v any
	if err := node.Decode(&v); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}
