package agentcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/agent"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/builtin"
	"github.com/parityhpc/parity/vendors/plugin"
)

// flagRegistry has one driver "acc" whose old flag --acc-mode maps to
// its "mode" field.
func flagRegistry(t *testing.T) *vendors.Registry {
	t.Helper()
	r := vendors.NewRegistry()
	err := r.Register(vendors.Registration{Name: "acc", DeprecatedFlags: []vendors.DeprecatedFlag{{Flag: "acc-mode", Field: "mode", Default: "auto"}},
		New: func(context.Context, vendors.Env, json.RawMessage) (vendors.Driver, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestApplyDeprecatedFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		entries []vendors.Entry
		want    string // the acc entry's settings after mapping
		err     string
		warned  bool
	}{
		{"an unchanged flag maps nothing", nil, []vendors.Entry{{Name: "acc"}}, "", "", false},
		{"a given flag lands in the block", []string{"--acc-mode=fast"}, []vendors.Entry{{Name: "acc"}}, `{"mode":"fast"}`, "", true},
		{"beside the block's other fields", []string{"--acc-mode=fast"}, []vendors.Entry{{Name: "acc", Settings: json.RawMessage(`{"x":1}`)}},
			`{"mode":"fast","x":1}`, "", true},
		{"the file and the flag both set it", []string{"--acc-mode=fast"}, []vendors.Entry{{Name: "acc", Settings: json.RawMessage(`{"mode":"slow"}`)}},
			"", `--acc-mode and the config file's drivers entry acc both set "mode"`, true},
		{"its driver is not configured", []string{"--acc-mode=fast"}, []vendors.Entry{{Name: "other"}}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := &cobra.Command{Use: "agent", RunE: func(*cobra.Command, []string) error { return nil }}
			flags := declareDeprecatedFlags(cmd, flagRegistry(t))
			if f := cmd.Flags().Lookup("acc-mode"); f == nil || !f.Hidden {
				t.Fatal("the deprecated flag is not declared hidden")
			}
			cmd.SetArgs(tt.args)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			got, err := applyDeprecatedFlags(cmd, flags, tt.entries, slog.New(slog.NewTextHandler(&logs, nil)))
			if warned := strings.Count(logs.String(), "deprecated flag: set it"); warned != map[bool]int{true: 1}[tt.warned] {
				t.Errorf("warned %d times, want %v once: %s", warned, tt.warned, logs.String())
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range got {
				if e.Name == "acc" && string(e.Settings) != tt.want {
					t.Errorf("settings %s, want %s", e.Settings, tt.want)
				}
			}
		})
	}
}

// TestAgentFlagsNameNoVendor: the agent's visible flags are vendor-free;
// the in-tree drivers' old flags exist only hidden.
func TestAgentFlagsNameNoVendor(t *testing.T) {
	cmd := newAgentCmd()
	usage := strings.ToLower(cmd.Flags().FlagUsages()) // hidden flags are left out
	for _, w := range []string{"nvidia", "amd", "rocm", "cuda", "nvml", "dcgm"} {
		if strings.Contains(usage, w) {
			t.Errorf("the agent's visible flags name %q:\n%s", w, usage)
		}
	}
	if f := cmd.Flags().Lookup("dcgm"); f == nil || !f.Hidden {
		t.Error("the old DCGM flag is not kept as a hidden alias")
	}
}

// TestRegistryDriversFromConfig: the config file's in-tree entries are
// what the agent builds, each with its block; a bad block fails the start
// naming the driver and the field.
func TestRegistryDriversFromConfig(t *testing.T) {
	reg, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file string
		want       []string
		err        string
	}{
		{"no drivers listed: every in-tree driver", "", []string{"nvidia", "amd", "cpu"}, ""},
		{"only those listed", "drivers:\n  - name: cpu\n    settings: {hostname: n7}\n", []string{"cpu"}, ""},
		{"a bad block", "drivers:\n  - name: amd\n    settings: {pollInterval: often}\n", nil, `driver amd: field pollInterval: "often"`},
		{"an unknown driver", "drivers:\n  - name: tpu\n", nil, `drivers[0] "tpu" (registered: nvidia, amd, cpu)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := agent.ParseNodeConfig("agent.yaml", []byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			o := agentOptions{registry: reg, nodeConfig: cfg, driverFlags: func(e []vendors.Entry) ([]vendors.Entry, error) { return e, nil }}
			drivers, closeAll, err := registryDrivers(context.Background(), slog.New(slog.DiscardHandler), o)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer closeAll()
			var names []string
			for _, d := range drivers {
				names = append(names, d.Info().Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.want, ",") {
				t.Errorf("drivers %v, want %v", names, tt.want)
			}
		})
	}
}

// oneDevice is an adapter's driver with one device.
type oneDevice struct{}

func (oneDevice) Info() vendors.Info { return vendors.Info{Name: "acme", Vendor: "acme"} }
func (oneDevice) Discover(context.Context) (gres.Inventory, error) {
	return gres.Inventory{Devices: []gres.Device{{UUID: "ACME-0", Vendor: "acme", Type: "a1", NUMANode: -1}}}, nil
}
func (oneDevice) Prepare(context.Context, vendors.Allocation) (vendors.Prepared, error) {
	return vendors.Prepared{}, nil
}
func (oneDevice) Release(context.Context, string) error { return nil }

// TestAgentDriversAttachAdapters: a plugin entry is attached beside the
// in-tree drivers and its devices join the node's inventory; one whose
// adapter is not running is reported and supervised, and the node starts
// without its devices.
func TestAgentDriversAttachAdapters(t *testing.T) {
	reg, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	up, down := filepath.Join(dir, "up.sock"), filepath.Join(dir, "down.sock")
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		served <- plugin.Serve(ctx, up, oneDevice{}, plugin.WithServerLogger(slog.New(slog.DiscardHandler)), plugin.WithReady(func() { close(ready) }))
	}()
	t.Cleanup(func() { cancel(); <-served })
	<-ready
	file := fmt.Sprintf("drivers:\n  - name: cpu\n  - plugin: unix://%s\n  - plugin: unix://%s\n    connectTimeout: 100ms\n", up, down)
	cfg, err := agent.ParseNodeConfig("agent.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	o := agentOptions{registry: reg, nodeConfig: cfg, driverFlags: func(e []vendors.Entry) ([]vendors.Entry, error) { return e, nil }}
	found, closeAll, err := agentDrivers(ctx, slog.New(slog.NewTextHandler(&logs, nil)), o, false)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	if len(found.Active) != 3 {
		t.Fatalf("active drivers %d, want cpu and both adapters (the down one supervised)", len(found.Active))
	}
	if _, ok := found.Inventory.Device("ACME-0"); !ok || found.Inventory.Host == nil {
		t.Errorf("inventory %+v: want the adapter's device and the cpu driver's host", found.Inventory)
	}
	if !strings.Contains(logs.String(), "adapter not attached") || !strings.Contains(logs.String(), down) {
		t.Errorf("the adapter that is not running is not reported:\n%s", logs.String())
	}
}
