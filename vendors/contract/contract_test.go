package contract_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/contract"
)

// failed returns the names of the failed checks, and fails the test on a
// result that is not exactly one of passed, skipped or failed.
func failed(t *testing.T, rs []contract.Result) []string {
	t.Helper()
	var out []string
	for _, r := range rs {
		if r.Passed && r.Skipped {
			t.Errorf("%s is both passed and skipped", r.Name)
		}
		if r.Failed() {
			out = append(out, r.Name)
			t.Logf("%s failed: %s", r.Name, r.Reason)
		}
		if (r.Skipped || r.Failed()) && r.Reason == "" {
			t.Errorf("%s did not pass and gives no reason", r.Name)
		}
	}
	return out
}

func skipped(rs []contract.Result) []string {
	var out []string
	for _, r := range rs {
		if r.Skipped {
			out = append(out, r.Name)
		}
	}
	return out
}

func TestRealDriversPassEveryCheck(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T) []contract.Result
	}{
		{"amd mi300x spx", func(t *testing.T) []contract.Result {
			r := newAMDRig(t, amdsim.Config{GPUs: 4, Seed: 1})
			return contract.Check(context.Background(), r.driver(), r.options(t))
		}},
		{"amd mi300x cpx partitions", func(t *testing.T) []contract.Result {
			r := newAMDRig(t, amdsim.Config{GPUs: 2, Seed: 2, ComputePartition: "cpx"})
			return contract.Check(context.Background(), r.driver(), r.options(t))
		}},
		{"amd mi210 with real device nodes", func(t *testing.T) []contract.Result {
			if os.Geteuid() != 0 {
				t.Skip("mknod of device nodes needs root")
			}
			r := newAMDRig(t, amdsim.Config{Model: "mi210", GPUs: 2, Seed: 8, DeviceNodes: true})
			rs := contract.Check(context.Background(), r.driver(), r.options(t))
			if res, _ := contract.Find(rs, contract.CheckDeviceFiles); res.Reason != "" {
				t.Errorf("device-files: %q; want every file checked as a character device", res.Reason)
			}
			return rs
		}},
		{"nvidia h100", func(t *testing.T) []contract.Result {
			r := newNVRig(t, nvmlsim.Config{GPUs: 4, Seed: 3})
			return contract.Check(context.Background(), r.driver(t), r.options(t))
		}},
		{"nvidia a100 with mig", func(t *testing.T) []contract.Result {
			r := newNVRig(t, nvmlsim.Config{Model: "a100", GPUs: 2, Seed: 4, MIG: map[int][]string{1: {"3g.20gb", "3g.20gb"}}})
			return contract.Check(context.Background(), r.driver(t), r.options(t))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := tt.run(t)
			if got := failed(t, rs); len(got) > 0 {
				t.Errorf("failed checks %v; want none", got)
			}
			if got := skipped(rs); len(got) > 0 {
				t.Errorf("skipped checks %v; want none (every option was given)", got)
			}
			if len(rs) != 14 {
				t.Errorf("got %d results; want 14", len(rs))
			}
		})
	}
}

func TestMissingOptionsSkipWithReasons(t *testing.T) {
	r := newAMDRig(t, amdsim.Config{GPUs: 2, Seed: 5})
	rs := contract.Check(context.Background(), r.driver(), contract.Options{})
	if got := failed(t, rs); len(got) > 0 {
		t.Errorf("failed %v; want none", got)
	}
	want := []string{contract.CheckStableAcrossReopen, contract.CheckNotApplicable, contract.CheckConditions}
	if got := skipped(rs); !slices.Equal(got, want) {
		t.Errorf("skipped %v; want %v", got, want)
	}
}

func TestHostWithoutHardwareSkipsDeviceChecks(t *testing.T) {
	d := amd.New(t.TempDir(), amd.WithLogger(quiet))
	rs := contract.Check(context.Background(), d, contract.Options{})
	if got := failed(t, rs); len(got) > 0 {
		t.Errorf("failed %v; want none", got)
	}
	r, _ := contract.Find(rs, contract.CheckDiscover)
	if !r.Skipped || !strings.Contains(r.Reason, "no hardware") {
		t.Errorf("discover: %+v; want skipped for lack of hardware", r)
	}
	for _, name := range []string{contract.CheckDeviceFiles, contract.CheckVisibleDevices, contract.CheckSamples} {
		if r, _ := contract.Find(rs, name); !r.Skipped {
			t.Errorf("%s: %+v; want skipped", name, r)
		}
	}
}

func TestNilDriverFailsEveryCheck(t *testing.T) {
	rs := contract.Check(context.Background(), nil, contract.Options{})
	if got := failed(t, rs); len(got) != len(rs) || len(rs) == 0 {
		t.Errorf("failed %d of %d; want all", len(got), len(rs))
	}
}

func TestChecksListWhatCheckRuns(t *testing.T) {
	descs := contract.Checks()
	rs := contract.Check(context.Background(), nil, contract.Options{})
	if len(descs) != len(rs) {
		t.Fatalf("Checks lists %d checks, Check ran %d", len(descs), len(rs))
	}
	ids := map[string]bool{}
	for i, d := range descs {
		if rs[i].Name != d.Name || rs[i].Description != d.Description {
			t.Errorf("check %d: Checks says %q (%q), Check ran %q (%q)", i, d.Name, d.Description, rs[i].Name, rs[i].Description)
		}
		id := contract.SpecID(d.Name)
		if want := "driver-contract/" + d.Name; id != want {
			t.Errorf("SpecID(%q) = %q; want %q", d.Name, id, want)
		}
		if ids[id] {
			t.Errorf("spec id %q is used twice", id)
		}
		ids[id] = true
	}
}

// tamper wraps the real AMD driver and corrupts one aspect of it, as a
// buggy adapter would. Nil hooks pass the driver's answer through.
type tamper struct {
	*amd.Driver
	info      func(vendors.Info) vendors.Info
	discover  func(gres.Inventory) gres.Inventory
	prepare   func(vendors.Allocation, vendors.Prepared, error) (vendors.Prepared, error)
	release   func(id string) error
	sample    func([]gres.Sample) []gres.Sample
	condition func(gres.Condition) gres.Condition
	diagnose  func(uuid string, level int) (gres.Diagnosis, bool)
}

func (d *tamper) Info() vendors.Info {
	if d.info != nil {
		return d.info(d.Driver.Info())
	}
	return d.Driver.Info()
}

func (d *tamper) Discover(ctx context.Context) (gres.Inventory, error) {
	inv, err := d.Driver.Discover(ctx)
	if err == nil && d.discover != nil {
		inv = d.discover(inv)
	}
	return inv, err
}

func (d *tamper) Prepare(ctx context.Context, a vendors.Allocation) (vendors.Prepared, error) {
	p, err := d.Driver.Prepare(ctx, a)
	if d.prepare != nil {
		return d.prepare(a, p, err)
	}
	return p, err
}

func (d *tamper) Release(ctx context.Context, id string) error {
	if d.release != nil {
		if err := d.release(id); err != nil {
			return err
		}
	}
	return d.Driver.Release(ctx, id)
}

func (d *tamper) Sample(ctx context.Context) ([]gres.Sample, error) {
	s, err := d.Driver.Sample(ctx)
	if err == nil && d.sample != nil {
		s = d.sample(s)
	}
	return s, err
}

func (d *tamper) WatchHealth(ctx context.Context, emit func(gres.Condition)) error {
	return d.Driver.WatchHealth(ctx, func(c gres.Condition) {
		if d.condition != nil {
			c = d.condition(c)
		}
		emit(c)
	})
}

func (d *tamper) Diagnose(ctx context.Context, uuid string, level int) (gres.Diagnosis, error) {
	if d.diagnose != nil {
		if diag, ok := d.diagnose(uuid, level); ok {
			return diag, nil
		}
	}
	return d.Driver.Diagnose(ctx, uuid, level)
}

// indicesOf returns the inventory indices of the allocated devices.
func indicesOf(inv gres.Inventory, uuids []string) string {
	var out []string
	for _, u := range uuids {
		d, _ := inv.Device(u)
		out = append(out, strconv.Itoa(d.Index))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func TestBrokenDriversFailTheNamedChecks(t *testing.T) {
	tests := []struct {
		name  string
		nodes bool // real character devices (needs root)
		setup func(t *testing.T, r *amdRig, d *tamper, o *contract.Options)
		want  []string
	}{
		{"global indices in the visible-devices variables", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			inv, err := d.Driver.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			d.prepare = func(a vendors.Allocation, p vendors.Prepared, err error) (vendors.Prepared, error) {
				if err == nil && len(a.Devices) > 0 {
					p.Env[amd.EnvROCRVisibleDevices] = indicesOf(inv, a.Devices)
				}
				return p, err
			}
		}, []string{contract.CheckVisibleDevices}},
		{"device files in request order, not bus order", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			d.prepare = func(a vendors.Allocation, p vendors.Prepared, err error) (vendors.Prepared, error) {
				if err == nil && len(p.DeviceFiles) > 2 {
					p.DeviceFiles[0], p.DeviceFiles[1] = p.DeviceFiles[1], p.DeviceFiles[0]
				}
				return p, err
			}
		}, []string{contract.CheckVisibleDevices}},
		{"a file of an unallocated device granted", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			inv, err := d.Driver.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			d.prepare = func(a vendors.Allocation, p vendors.Prepared, err error) (vendors.Prepared, error) {
				if err == nil && !slices.Contains(a.Devices, inv.Devices[0].UUID) {
					p.DeviceFiles = append(p.DeviceFiles, inv.Devices[0].Files...)
				}
				return p, err
			}
		}, []string{contract.CheckVisibleDevices}},
		{"UUIDs change between discoveries", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			var mu sync.Mutex
			calls := 0
			d.discover = func(inv gres.Inventory) gres.Inventory {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if calls > 1 {
					for i := range inv.Devices {
						inv.Devices[i].UUID += "-" + strconv.Itoa(calls)
					}
				}
				return inv
			}
		}, []string{contract.CheckStableUUIDs}},
		{"UUIDs change across a restart", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			o.Reopen = func(context.Context) (vendors.Driver, error) {
				return &tamper{Driver: r.driver(), discover: func(inv gres.Inventory) gres.Inventory {
					inv.Devices[0].UUID = "GPU-reborn"
					return inv
				}}, nil
			}
		}, []string{contract.CheckStableAcrossReopen}},
		{"devices labelled with another vendor", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			d.discover = func(inv gres.Inventory) gres.Inventory {
				inv.Devices[1].Vendor = "nvidia"
				return inv
			}
		}, []string{contract.CheckDiscover}},
		{"an unknown capability advertised and an implemented one hidden", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			d.info = func(i vendors.Info) vendors.Info {
				i.Capabilities = []vendors.Capability{"teleport", vendors.CapHealth, vendors.CapDiagnose}
				return i
			}
		}, []string{contract.CheckInfo}},
		{"prepare not idempotent", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			var mu sync.Mutex
			n := 0
			d.prepare = func(a vendors.Allocation, p vendors.Prepared, err error) (vendors.Prepared, error) {
				mu.Lock()
				defer mu.Unlock()
				n++
				if err == nil {
					p.Env["PREPARE_CALL"] = strconv.Itoa(n)
				}
				return p, err
			}
		}, []string{contract.CheckPrepareIdempotent}},
		{"unknown UUIDs accepted", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			d.prepare = func(a vendors.Allocation, p vendors.Prepared, err error) (vendors.Prepared, error) {
				if errors.Is(err, gres.ErrUnknownDevice) {
					return vendors.Prepared{Env: map[string]string{}}, nil
				}
				return p, err
			}
		}, []string{contract.CheckUnknownDevice}},
		{"release of an unknown id fails", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			d.release = func(id string) error {
				if strings.HasSuffix(id, "never-prepared") {
					return errors.New("no such allocation")
				}
				return nil
			}
		}, []string{contract.CheckRelease}},
		{"a temperature of 300 °C", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			d.sample = func(s []gres.Sample) []gres.Sample {
				s[0].TemperatureC = 300
				return s
			}
		}, []string{contract.CheckSamples}},
		{"memory used above total", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			d.sample = func(s []gres.Sample) []gres.Sample {
				s[1].MemoryUsedBytes = s[1].MemoryTotalBytes + 1
				return s
			}
		}, []string{contract.CheckSamples}},
		{"a malformed condition", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			d.condition = func(c gres.Condition) gres.Condition {
				c.Severity, c.Code = 7, ""
				return c
			}
		}, []string{contract.CheckConditions}},
		{"a long diagnosis that passes without testing", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			d.diagnose = func(uuid string, level int) (gres.Diagnosis, bool) {
				return gres.Diagnosis{UUID: uuid, Level: level, Passed: true}, level == 3
			}
		}, []string{contract.CheckDiagnoseLong}},
		{"an empty host reported as a failure", false, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			o.Empty = func(context.Context) (vendors.Driver, error) {
				return brokenEmpty{r.driver()}, nil
			}
		}, []string{contract.CheckNotApplicable}},
		{"device numbers that disagree with the node on disk", true, func(t *testing.T, r *amdRig, d *tamper, o *contract.Options) {
			d.discover = func(inv gres.Inventory) gres.Inventory {
				inv.Devices[0].Files = slices.Clone(inv.Devices[0].Files)
				inv.Devices[0].Files[0].Minor = 250
				return inv
			}
		}, []string{contract.CheckDeviceFiles}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.nodes && os.Geteuid() != 0 {
				t.Skip("mknod of device nodes needs root")
			}
			r := newAMDRig(t, amdsim.Config{GPUs: 4, Seed: 7, DeviceNodes: tt.nodes})
			d := &tamper{Driver: r.driver()}
			o := r.options(t)
			tt.setup(t, r, d, &o)
			rs := contract.Check(context.Background(), d, o)
			if got := failed(t, rs); !slices.Equal(got, tt.want) {
				t.Errorf("failed checks %v; want %v", got, tt.want)
			}
		})
	}
}

// brokenEmpty reports a host without hardware as a plain error.
type brokenEmpty struct{ vendors.Driver }

func (brokenEmpty) Discover(context.Context) (gres.Inventory, error) {
	return gres.Inventory{}, errors.New("no GPUs found")
}
