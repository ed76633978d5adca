package nvmlsim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/parityhpc/parity/topology"
)

// Machine is one simulated NVIDIA host. All hooks and every NVML call the
// machine serves are safe for concurrent use: they share one mutex, except
// event-set waits, which block on their own queue.
type Machine struct {
	mu      sync.Mutex
	cfg     Config
	model   model
	srv     *server.Server
	gpus    []*gpuState
	handles map[nvml.Device]*gpuState // GPU and MIG handles to their (parent) GPU
	sets    map[nvml.EventSet]*eventQueue
	// registered is closed and replaced on every event registration.
	registered chan struct{}
	missing    map[string]bool
	numa       []topology.NUMANode
	// rng draws the UUIDs of MIG devices created after New (live MIG);
	// root is where WriteRoot laid out the files, for their capabilities.
	rng  *rand.Rand
	root string
}

// gpuState is what the simulated hardware knows about one GPU.
type gpuState struct {
	index        int
	dev          *server.Device
	uuid         string
	domain, bus  uint32
	minor        int
	numa         int
	util         uint32
	memUsed      uint64
	tempC        uint32
	eccCorr      uint64
	eccUnc       uint64
	remapPending bool
	remapFailed  bool
	lost         bool
	links        []linkEnd
	migEnabled   bool
	mig          []*migState
}

// New builds a machine from cfg, or explains what is wrong with cfg.
func New(cfg Config) (*Machine, error) {
	cfg, mdl, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	m := &Machine{
		cfg: cfg, model: mdl,
		srv:        mdl.newServer(repeat(mdl.gpu, cfg.GPUs)...),
		handles:    map[nvml.Device]*gpuState{},
		sets:       map[nvml.EventSet]*eventQueue{},
		registered: make(chan struct{}),
		missing:    map[string]bool{},
		numa:       cfg.Host.NUMA(),
	}
	for _, s := range cfg.MissingSymbols {
		m.missing[s] = true
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed_9e37_79b9_7f4a))
	for i, d := range m.srv.Devices {
		dev, ok := d.(*server.Device)
		if !ok {
			return nil, fmt.Errorf("nvmlsim: mock device %d has unexpected type %T", i, d)
		}
		domain, bus := busOf(mdl, cfg.GPUs, i)
		g := &gpuState{index: i, dev: dev, uuid: newUUID(rng, "GPU"), domain: domain, bus: bus,
			minor: cfg.Minors[i], numa: cfg.GPUNUMA[i], tempC: 32}
		// The mock's own lookups read these fields, so keep them in step.
		dev.UUID, dev.Minor, dev.PciBusID = g.uuid, g.minor, nvmlBusID(domain, bus)
		m.gpus = append(m.gpus, g)
		m.handles[dev] = g
	}
	m.buildLinks()
	for _, g := range m.gpus {
		m.wireDevice(g)
	}
	if err := m.buildMIG(rng); err != nil {
		return nil, err
	}
	m.rng = rng
	for _, g := range m.gpus {
		m.wireLiveMIG(g)
	}
	m.wireServer()
	return m, nil
}

func repeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// busOf places GPU i: the product's real bus numbers for an 8-GPU box,
// else a synthetic but distinct and ascending sequence below 0xe0 (the
// simulated NVSwitches sit at 0xe0 and up).
func busOf(mdl model, n, i int) (domain, bus uint32) {
	if n == len(mdl.buses) {
		return 0, mdl.buses[i]
	}
	return uint32(i / 14), uint32(0x18 + (i%14)*0x0e)
}

// newUUID formats 16 seeded random bytes as an RFC 4122 version 4 UUID.
func newUUID(rng *rand.Rand, prefix string) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// nvmlBusID is NVML's own spelling: 8-digit domain, upper-case hex.
func nvmlBusID(domain, bus uint32) string { return fmt.Sprintf("%08X:%02X:00.0", domain, bus) }

// sysfsBusID is the Linux spelling.
func sysfsBusID(domain, bus uint32) string { return fmt.Sprintf("%04x:%02x:00.0", domain, bus) }

// NVML returns the simulated library; hand it to the driver under test.
func (m *Machine) NVML() nvml.Interface { return m.srv }

// Config returns the configuration with every default filled in.
func (m *Machine) Config() Config {
	c := m.cfg
	c.GPUNUMA, c.Minors = slices.Clone(c.GPUNUMA), slices.Clone(c.Minors)
	return c
}

// UUIDs returns the GPU UUIDs in NVML index order (also bus order).
func (m *Machine) UUIDs() []string {
	out := make([]string, len(m.gpus))
	for i, g := range m.gpus {
		out[i] = g.uuid
	}
	return out
}

// MIGUUIDs returns the UUIDs of the MIG devices created on a GPU, in
// creation order.
func (m *Machine) MIGUUIDs(gpu int) []string {
	if gpu < 0 || gpu >= len(m.gpus) {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refreshMIG(m.gpus[gpu])
	var out []string
	for _, s := range m.gpus[gpu].mig {
		out = append(out, s.uuid)
	}
	return out
}

// PCIBusID returns the GPU's bus id in sysfs form ("0000:18:00.0").
func (m *Machine) PCIBusID(gpu int) string {
	if gpu < 0 || gpu >= len(m.gpus) {
		return ""
	}
	return sysfsBusID(m.gpus[gpu].domain, m.gpus[gpu].bus)
}

// gpu returns the state of GPU i for a hook, locking the machine; the
// caller must unlock.
func (m *Machine) gpu(i int) (*gpuState, error) {
	if i < 0 || i >= len(m.gpus) {
		return nil, fmt.Errorf("nvmlsim: gpu %d is outside 0..%d", i, len(m.gpus)-1)
	}
	m.mu.Lock()
	return m.gpus[i], nil
}

// InjectXID raises an XID critical error on a GPU, as the driver would
// after a fault, delivering it to every event set registered for XIDs.
func (m *Machine) InjectXID(gpu int, xid uint64) error {
	g, err := m.gpu(gpu)
	if err != nil {
		return err
	}
	defer m.mu.Unlock()
	m.emit(g, nvml.EventTypeXidCriticalError, xid)
	return nil
}

// InjectMIGXID raises an XID inside one MIG instance (mig indexes
// MIGUUIDs(gpu)); the event names the instance's GPU and compute instance
// ids, as NVML does for faults contained in an instance.
func (m *Machine) InjectMIGXID(gpu, mig int, xid uint64) error {
	g, err := m.gpu(gpu)
	if err != nil {
		return err
	}
	defer m.mu.Unlock()
	m.refreshMIG(g)
	if mig < 0 || mig >= len(g.mig) {
		return fmt.Errorf("nvmlsim: gpu %d has no mig device %d", gpu, mig)
	}
	s := g.mig[mig]
	m.emitOn(g, nvml.EventTypeXidCriticalError, xid, uint32(s.giID), uint32(s.ciID))
	return nil
}

// SetUtilization sets the GPU's busy percentage (0..100); power draw
// follows it linearly between idle and TDP.
func (m *Machine) SetUtilization(gpu int, pct uint32) error {
	if pct > 100 {
		return fmt.Errorf("nvmlsim: utilization %d%% is above 100", pct)
	}
	g, err := m.gpu(gpu)
	if err != nil {
		return err
	}
	defer m.mu.Unlock()
	g.util = pct
	return nil
}

// SetMemoryUsed sets the GPU's used framebuffer bytes.
func (m *Machine) SetMemoryUsed(gpu int, bytes uint64) error {
	g, err := m.gpu(gpu)
	if err != nil {
		return err
	}
	defer m.mu.Unlock()
	if total := g.dev.MemoryInfo.Total; bytes > total {
		return fmt.Errorf("nvmlsim: memory used %d exceeds gpu %d total %d", bytes, gpu, total)
	}
	g.memUsed = bytes
	return nil
}

// SetTemperature sets the GPU core temperature in °C.
func (m *Machine) SetTemperature(gpu int, c uint32) error {
	g, err := m.gpu(gpu)
	if err != nil {
		return err
	}
	defer m.mu.Unlock()
	g.tempC = c
	return nil
}

// AddECC adds volatile (and aggregate) ECC errors; uncorrected errors also
// raise a double-bit ECC event and corrected ones a single-bit event.
func (m *Machine) AddECC(gpu int, corrected, uncorrected uint64) error {
	g, err := m.gpu(gpu)
	if err != nil {
		return err
	}
	defer m.mu.Unlock()
	g.eccCorr += corrected
	g.eccUnc += uncorrected
	if corrected > 0 {
		m.emit(g, nvml.EventTypeSingleBitEccError, 0)
	}
	if uncorrected > 0 {
		m.emit(g, nvml.EventTypeDoubleBitEccError, 0)
	}
	return nil
}

// SetRemappedRows sets the row-remapper flags: pending means a GPU reset
// is needed to apply a remap, failed means the remapper ran out of rows.
func (m *Machine) SetRemappedRows(gpu int, pending, failed bool) error {
	g, err := m.gpu(gpu)
	if err != nil {
		return err
	}
	defer m.mu.Unlock()
	g.remapPending, g.remapFailed = pending, failed
	return nil
}

// MarkLost makes the GPU fall off the bus: from now on its handles, and
// the handle lookups that would find it, return ERROR_GPU_IS_LOST.
func (m *Machine) MarkLost(gpu int) error {
	g, err := m.gpu(gpu)
	if err != nil {
		return err
	}
	defer m.mu.Unlock()
	g.lost = true
	return nil
}

// normBusID accepts any of NVML's spellings and returns the sysfs form.
func normBusID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if dom, rest, ok := strings.Cut(s, ":"); ok && len(dom) > 4 {
		s = dom[len(dom)-4:] + ":" + rest
	}
	return s
}

// Repair models an operator's fix of a GPU (a reset or a board swap): it
// is back on the bus, no row remap is pending or failed, and its volatile
// ECC counters read zero, as after a driver reload.
func (m *Machine) Repair(gpu int) error {
	g, err := m.gpu(gpu)
	if err != nil {
		return err
	}
	defer m.mu.Unlock()
	g.lost, g.remapPending, g.remapFailed = false, false, false
	g.eccCorr, g.eccUnc = 0, 0
	return nil
}
