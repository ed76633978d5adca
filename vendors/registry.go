package vendors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// Registry errors, wrapped with the driver they concern.
var (
	// ErrDuplicate refuses a second registration under a name.
	ErrDuplicate = errors.New("vendors: driver name already registered")
	// ErrUnknownDriver names a configured driver nothing registered.
	ErrUnknownDriver = errors.New("vendors: no driver registered under that name")
)

// Env is what the composition root gives every factory: the host's root
// (where /sys, /proc and /dev are found; "/" on a real host) and a logger.
// A driver's own settings may override the root.
type Env struct {
	Root   string
	Logger *slog.Logger
}

// Factory builds one driver from its own settings block (JSON, decoded by
// the driver, typically with DecodeSettings). It returns an error wrapping
// ErrNotApplicable when the host cannot have the driver's hardware at all;
// the registry then skips it with that reason.
type Factory func(ctx context.Context, env Env, settings json.RawMessage) (Driver, error)

// DeprecatedFlag is an old command-line flag of the agent that now lives in
// a driver's settings: the composition root keeps it as a hidden alias and
// writes its value into the block under Field, so a site's command lines
// keep working while the flags name no vendor.
type DeprecatedFlag struct {
	Flag    string // without dashes, e.g. "sample-root"
	Field   string // the settings field it sets
	Default string // the flag's default; an unchanged flag is not mapped
	Usage   string
}

// Registration is one driver known to a Registry.
type Registration struct {
	Name string
	// Summary says in one line what the driver drives (help texts).
	Summary         string
	New             Factory
	DeprecatedFlags []DeprecatedFlag
}

// Registry holds driver registrations by name. It is a value: every agent,
// command and test builds its own (vendors/builtin fills one with the
// in-tree drivers); nothing registers at init time. It is safe for
// concurrent use.
type Registry struct {
	mu   sync.Mutex
	regs []Registration // registration order is discovery order
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds a driver. A name already registered is refused with
// ErrDuplicate; so are an empty name and a nil factory.
func (r *Registry) Register(reg Registration) error {
	switch {
	case strings.TrimSpace(reg.Name) == "":
		return errors.New("vendors: register: empty driver name")
	case reg.New == nil:
		return fmt.Errorf("vendors: register %q: nil factory", reg.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.ContainsFunc(r.regs, func(have Registration) bool { return have.Name == reg.Name }) {
		return fmt.Errorf("%w: %q", ErrDuplicate, reg.Name)
	}
	reg.DeprecatedFlags = slices.Clone(reg.DeprecatedFlags)
	r.regs = append(r.regs, reg)
	return nil
}

// Registrations returns every registration in registration order.
func (r *Registry) Registrations() []Registration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.regs)
}

// Names returns the registered names in registration order.
func (r *Registry) Names() []string {
	var out []string
	for _, reg := range r.Registrations() {
		out = append(out, reg.Name)
	}
	return out
}

// Lookup returns the registration under name.
func (r *Registry) Lookup(name string) (Registration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.IndexFunc(r.regs, func(reg Registration) bool { return reg.Name == name })
	if i < 0 {
		return Registration{}, false
	}
	return r.regs[i], true
}

// Entry is one configured driver: a registered name and its settings
// block (nil for the driver's defaults).
type Entry struct {
	Name     string
	Settings json.RawMessage
}

// Built is what Build made of a configuration.
type Built struct {
	// Drivers are the drivers built, in configuration order.
	Drivers []Driver
	// Skipped names the drivers whose factory said the host cannot have
	// their hardware, with why.
	Skipped map[string]string
}

// Build runs the factory of every entry in order; no entries means every
// registered driver with its defaults. A factory's ErrNotApplicable skips
// that driver with its reason; any other failure, an unknown name or a
// name given twice is an error naming the entry, and the drivers already
// built are closed.
func (r *Registry) Build(ctx context.Context, env Env, entries []Entry) (Built, error) {
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	if env.Root == "" {
		env.Root = "/"
	}
	if len(entries) == 0 {
		for _, name := range r.Names() {
			entries = append(entries, Entry{Name: name})
		}
	}
	out := Built{Skipped: map[string]string{}}
	fail := func(err error) (Built, error) {
		_ = CloseAll(out.Drivers)
		return Built{}, err
	}
	seen := map[string]bool{}
	for i, e := range entries {
		reg, ok := r.Lookup(e.Name)
		if !ok {
			return fail(fmt.Errorf("%w: drivers[%d] %q (registered: %s)", ErrUnknownDriver, i, e.Name, strings.Join(r.Names(), ", ")))
		}
		if seen[e.Name] {
			return fail(fmt.Errorf("vendors: drivers[%d] %q: configured twice", i, e.Name))
		}
		seen[e.Name] = true
		d, err := reg.New(ctx, env, e.Settings)
		if errors.Is(err, ErrNotApplicable) {
			out.Skipped[e.Name] = err.Error()
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("vendors: driver %s: %w", e.Name, err))
		}
		out.Drivers = append(out.Drivers, d)
	}
	return out, nil
}

// CloseAll closes the drivers that hold library handles or goroutines.
func CloseAll(drivers []Driver) error {
	var errs []error
	for _, d := range drivers {
		if c, ok := d.(Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
