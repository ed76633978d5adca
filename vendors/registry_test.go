package vendors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// fakeDriver records whether it was closed.
type fakeDriver struct {
	name   string
	closed bool
}

func (f *fakeDriver) Info() vendors.Info { return vendors.Info{Name: f.name, Vendor: f.name} }
func (f *fakeDriver) Discover(context.Context) (gres.Inventory, error) {
	return gres.Inventory{}, nil
}
func (f *fakeDriver) Prepare(context.Context, vendors.Allocation) (vendors.Prepared, error) {
	return vendors.Prepared{}, nil
}
func (f *fakeDriver) Release(context.Context, string) error { return nil }
func (f *fakeDriver) Close() error                          { f.closed = true; return nil }

// testRegistry registers "a" (decodes {"n": int}), "b" (always
// built), "absent" (not applicable) and "broken" (fails); built collects
// what the factories made.
func testRegistry(t *testing.T, built *[]*fakeDriver) *vendors.Registry {
	t.Helper()
	r := vendors.NewRegistry()
	mk := func(name string, err error) vendors.Registration {
		return vendors.Registration{Name: name, New: func(_ context.Context, _ vendors.Env, raw json.RawMessage) (vendors.Driver, error) {
			if err != nil {
				return nil, err
			}
			var s struct {
				N int `json:"n"`
			}
			if err := vendors.DecodeSettings(name, raw, &s); err != nil {
				return nil, err
			}
			d := &fakeDriver{name: fmt.Sprintf("%s%d", name, s.N)}
			*built = append(*built, d)
			return d, nil
		}}
	}
	for _, reg := range []vendors.Registration{mk("a", nil), mk("b", nil),
		mk("absent", fmt.Errorf("no such library: %w", vendors.ErrNotApplicable)), mk("broken", errors.New("library wedged"))} {
		if err := r.Register(reg); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func TestRegistryRegister(t *testing.T) {
	var built []*fakeDriver
	r := testRegistry(t, &built)
	noop := func(context.Context, vendors.Env, json.RawMessage) (vendors.Driver, error) { return nil, nil }
	tests := []struct {
		name string
		reg  vendors.Registration
		want string
		is   error
	}{
		{"a duplicate name is refused", vendors.Registration{Name: "a", New: noop}, `"a"`, vendors.ErrDuplicate},
		{"an empty name", vendors.Registration{Name: " ", New: noop}, "empty driver name", nil},
		{"no factory", vendors.Registration{Name: "c"}, "nil factory", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := r.Register(tt.reg)
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("Register = %v, want an error naming %s (is %v)", err, tt.want, tt.is)
			}
		})
	}
	if got := strings.Join(r.Names(), ","); got != "a,b,absent,broken" {
		t.Errorf("Names = %s: a refused registration changed the registry", got)
	}
}

func TestRegistryBuild(t *testing.T) {
	tests := []struct {
		name    string
		entries []vendors.Entry
		want    []string // the drivers built, in order
		skipped []string
		err     string
		is      error
	}{
		{"settings reach their driver", []vendors.Entry{{Name: "b", Settings: json.RawMessage(`{"n": 2}`)}, {Name: "a"}},
			[]string{"b2", "a0"}, nil, "", nil},
		{"not applicable skips with its reason", []vendors.Entry{{Name: "absent"}, {Name: "a"}}, []string{"a0"}, []string{"absent"}, "", nil},
		{"an unknown name is refused, naming those registered", []vendors.Entry{{Name: "a"}, {Name: "gpu9"}},
			nil, nil, `drivers[1] "gpu9" (registered: a, b, absent, broken)`, vendors.ErrUnknownDriver},
		{"a name configured twice", []vendors.Entry{{Name: "a"}, {Name: "a"}}, nil, nil, `drivers[1] "a": configured twice`, nil},
		{"a failing factory names its driver", []vendors.Entry{{Name: "a"}, {Name: "broken"}}, nil, nil, "driver broken: library wedged", nil},
		{"a bad block names the driver and the field", []vendors.Entry{{Name: "a", Settings: json.RawMessage(`{"n": "two"}`)}},
			nil, nil, "driver a: field n: got a string, want int", vendors.ErrSettings},
		{"an unknown field names the driver", []vendors.Entry{{Name: "b", Settings: json.RawMessage(`{"m": 1}`)}},
			nil, nil, `driver b: unknown field "m"`, vendors.ErrSettings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var made []*fakeDriver
			r := testRegistry(t, &made)
			got, err := r.Build(context.Background(), vendors.Env{}, tt.entries)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || (tt.is != nil && !errors.Is(err, tt.is)) {
					t.Fatalf("Build = %v, want an error naming %q", err, tt.err)
				}
				for _, d := range made {
					if !d.closed {
						t.Errorf("driver %s built before the failure was not closed", d.name)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range got.Drivers {
				names = append(names, d.Info().Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.want, ",") {
				t.Errorf("built %v, want %v", names, tt.want)
			}
			for _, s := range tt.skipped {
				if !strings.Contains(got.Skipped[s], "no such library") {
					t.Errorf("Skipped[%s] = %q, want the factory's reason", s, got.Skipped[s])
				}
			}
			if len(got.Skipped) != len(tt.skipped) {
				t.Errorf("Skipped = %v, want %v", got.Skipped, tt.skipped)
			}
		})
	}
}

// TestRegistryBuildDefaults: no entries builds every registered driver,
// and a not-applicable one still never fails the build.
func TestRegistryBuildDefaults(t *testing.T) {
	var made []*fakeDriver
	r := vendors.NewRegistry()
	full := testRegistry(t, &made)
	for _, reg := range full.Registrations() {
		if reg.Name != "broken" {
			if err := r.Register(reg); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := r.Build(context.Background(), vendors.Env{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Drivers) != 2 || got.Skipped["absent"] == "" {
		t.Fatalf("defaults built %d drivers, skipped %v; want a and b, absent skipped", len(got.Drivers), got.Skipped)
	}
}

func TestSettingsDuration(t *testing.T) {
	tests := []struct {
		value string
		want  string
		err   string
	}{
		{"", "5s", ""},
		{"1m30s", "1m30s", ""},
		{"30", "", `driver d: field iv: "30" is not a duration`},
		{"-1s", "", `driver d: field iv: "-1s" must be positive`},
	}
	for _, tt := range tests {
		got, err := vendors.SettingsDuration("d", "iv", tt.value, 5e9)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, vendors.ErrSettings) {
				t.Errorf("SettingsDuration(%q) = %v, want %s", tt.value, err, tt.err)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("SettingsDuration(%q) = %v, %v; want %s", tt.value, got, err, tt.want)
		}
	}
}
