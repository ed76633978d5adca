package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

var (
	_ vendors.Driver        = (*Driver)(nil)
	_ vendors.Sampler       = (*Driver)(nil)
	_ vendors.HealthWatcher = (*Driver)(nil)
	_ vendors.Diagnoser     = (*Driver)(nil)
)

// Variables Prepare sets.
const (
	EnvVisibleDevices = "HABANA_VISIBLE_DEVICES"
	EnvVisibleModules = "HABANA_VISIBLE_MODULES"
)

// Vendor is the label on Gaudi devices.
const Vendor = "habana"

// Ticker is the part of time.Ticker the health watcher uses.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// Driver reads the habanalabs sysfs and /dev tree under root ("/" on a
// real host). It is safe for concurrent use.
type Driver struct {
	root      string
	log       *slog.Logger
	now       func() time.Time
	newTicker func(time.Duration) Ticker
	poll      time.Duration
	meter     meter

	mu       sync.Mutex
	inv      *gres.Inventory
	cards    map[string]card // by UUID, from the last discovery
	prepared map[string]preparedEntry
}

// card is what the adapter keeps of one discovered card besides its
// gres.Device: where to read it.
type card struct {
	accel    int // n of accel<n>
	moduleID int
	hwmon    string
	ecc      *eccEvents // the family's ECC events; nil: not measured
}

type preparedEntry struct {
	devices []string // sorted
	out     vendors.Prepared
}

// Option configures a Driver.
type Option func(*Driver)

// WithClock sets the clock stamped on samples and conditions.
func WithClock(now func() time.Time) Option { return func(d *Driver) { d.now = now } }

// WithTicker replaces time.NewTicker for the health watcher.
func WithTicker(f func(time.Duration) Ticker) Option { return func(d *Driver) { d.newTicker = f } }

// WithPoll sets how often the health watcher reads the cards.
func WithPoll(iv time.Duration) Option { return func(d *Driver) { d.poll = iv } }

// withMeter replaces the INFO-ioctl reader of utilisation and memory.
func withMeter(m meter) Option { return func(d *Driver) { d.meter = m } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(d *Driver) { d.log = l } }

// NewDriver returns a driver over the tree under root.
func NewDriver(root string, opts ...Option) *Driver {
	d := &Driver{root: root, log: slog.Default(), now: time.Now, poll: time.Second, meter: ioctlMeter{},
		newTicker: func(iv time.Duration) Ticker { return realTicker{time.NewTicker(iv)} },
		prepared:  map[string]preparedEntry{}}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Info describes the driver; it performs no I/O.
func (d *Driver) Info() vendors.Info {
	return vendors.Info{Name: "gaudi", Vendor: Vendor, Version: "gaudi-driver/1",
		Capabilities:      []vendors.Capability{vendors.CapSamples, vendors.CapHealth, vendors.CapDiagnose},
		VisibleDevicesEnv: []string{EnvVisibleDevices}}
}

// uuidOf derives a card's identity from the host and the card's PCI
// address: sysfs holds no serial (see doc.go), and both survive restarts.
func uuidOf(machine, bdf string) string {
	h := sha256.Sum256([]byte("habanalabs/" + machine + "/" + bdf))
	return fmt.Sprintf("HL-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// Discover reads every Habana card of the accel class, in PCI bus order.
// A host without one reports vendors.ErrNotApplicable.
func (d *Driver) Discover(ctx context.Context) (gres.Inventory, error) {
	if err := ctx.Err(); err != nil {
		return gres.Inventory{}, err
	}
	idx, err := accelIndexes(d.root)
	if err != nil {
		return gres.Inventory{}, err
	}
	var devs []gres.Device
	var fams []family
	cards := map[string]card{}
	for _, n := range idx {
		if v, err := readAttr(d.root, n, "vendor"); err != nil || v != habanaVendor {
			continue // another driver's accel node
		}
		dev, fam, c, err := d.readCard(n)
		if err != nil {
			return gres.Inventory{}, err
		}
		if dev.UUID == "" {
			continue // a Habana device this adapter does not schedule
		}
		devs, fams, cards[dev.UUID] = append(devs, dev), append(fams, fam), c
	}
	if len(devs) == 0 {
		return gres.Inventory{}, fmt.Errorf("gaudi: no Gaudi card under %s: %w", filepath.Join(d.root, classDir), vendors.ErrNotApplicable)
	}
	order := make([]int, len(devs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareBDF(devs[a].PCIBusID, devs[b].PCIBusID) })
	sorted, sortedFams := make([]gres.Device, len(devs)), make([]family, len(devs))
	for k, i := range order {
		sorted[k], sortedFams[k] = devs[i], fams[i]
		sorted[k].Index = k
	}
	linkAllToAll(sorted, sortedFams)
	inv := gres.Inventory{Vendor: Vendor, DriverVersion: sorted[0].Attributes["driver_ver"], Devices: sorted}
	d.mu.Lock()
	d.inv, d.cards = &inv, cards
	d.mu.Unlock()
	return cloneInventory(inv), nil
}

// compareBDF orders PCI addresses ("0000:19:00.0"): the kernel's
// fixed-width lower-case hex form sorts as text.
func compareBDF(a, b string) int { return strings.Compare(a, b) }

// readCard reads one card; a zero Device (no UUID) means a Habana device
// of a kind this adapter does not schedule.
func (d *Driver) readCard(n int) (gres.Device, family, card, error) {
	typ, err := readAttr(d.root, n, "device_type")
	if err != nil {
		return gres.Device{}, family{}, card{}, err
	}
	fam, ok := families[typ]
	if !ok {
		d.log.Warn("gaudi: skipping a Habana device of an unscheduled type", "accel", n, "device_type", typ)
		return gres.Device{}, family{}, card{}, nil
	}
	s := map[string]string{}
	for _, name := range []string{"pci_addr", "local_cpulist", "driver_ver", "cpucp_ver"} {
		if s[name], err = readAttr(d.root, n, name); err != nil {
			return gres.Device{}, family{}, card{}, err
		}
	}
	numa, err := readInt(d.root, n, "numa_node")
	if err != nil {
		return gres.Device{}, family{}, card{}, err
	}
	module, err := readInt(d.root, n, "module_id")
	if err != nil {
		return gres.Device{}, family{}, card{}, err
	}
	cpus, err := topology.ParseCPUList(s["local_cpulist"])
	if err != nil {
		return gres.Device{}, family{}, card{}, fmt.Errorf("gaudi: accel%d local_cpulist: %w", n, err)
	}
	files, err := d.deviceFiles(n)
	if err != nil {
		return gres.Device{}, family{}, card{}, err
	}
	machine, err := machineID(d.root)
	if err != nil {
		return gres.Device{}, family{}, card{}, err
	}
	dev := gres.Device{UUID: uuidOf(machine, s["pci_addr"]), Vendor: Vendor, Name: fam.name, Type: fam.gresType,
		PCIBusID: s["pci_addr"], NUMANode: int(numa), LocalCPUs: cpus, MemoryBytes: fam.hbm, Files: files,
		PCIeSwitch: pcieSwitch(d.root, n),
		Attributes: map[string]string{"module_id": strconv.FormatInt(module, 10), "accel": fmt.Sprintf("accel%d", n),
			"device_type": typ, "driver_ver": s["driver_ver"], "firmware": s["cpucp_ver"]}}
	return dev, fam, card{accel: n, moduleID: int(module), hwmon: hwmonDir(d.root, n), ecc: fam.ecc}, nil
}

// deviceFiles are a card's compute and control nodes, with the numbers
// their sysfs dev files give.
func (d *Driver) deviceFiles(n int) ([]gres.DeviceFile, error) {
	var out []gres.DeviceFile
	for _, name := range []string{fmt.Sprintf("accel%d", n), fmt.Sprintf("accel_controlD%d", n)} {
		major, minor, err := devNumbers(d.root, name)
		if err != nil {
			return nil, err
		}
		out = append(out, gres.DeviceFile{Path: filepath.Join(d.root, "dev", "accel", name), Major: major, Minor: minor})
	}
	return out, nil
}

func cloneInventory(inv gres.Inventory) gres.Inventory {
	out := inv
	out.Devices = slices.Clone(inv.Devices)
	for i := range out.Devices {
		out.Devices[i].Files = slices.Clone(out.Devices[i].Files)
		out.Devices[i].Links = slices.Clone(out.Devices[i].Links)
		out.Devices[i].Attributes = maps.Clone(out.Devices[i].Attributes)
	}
	return out
}

// current returns the last discovery, discovering once if there is none.
func (d *Driver) current(ctx context.Context) (gres.Inventory, map[string]card, error) {
	d.mu.Lock()
	inv, cards := d.inv, d.cards
	d.mu.Unlock()
	if inv != nil {
		return *inv, cards, nil
	}
	if _, err := d.Discover(ctx); err != nil {
		return gres.Inventory{}, nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return *d.inv, d.cards, nil
}
