package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// AdapterAbsent is the code of the conditions that drain the devices an
// adapter registered at the agent's previous start when it is not up at
// this one (its binary missing, its socket not there yet).
const AdapterAbsent = "absent"

// AdapterStateFile is where an agent keeps the inventory the adapter at
// target last registered, under dir: one file per socket.
func AdapterStateFile(dir, target string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, strings.TrimPrefix(target, "unix://"))
	return filepath.Join(dir, "adapter-"+strings.Trim(name, "_")+".json")
}

// saveState keeps the registered inventory for the agent's next start,
// written whole (a temporary file renamed over the old one).
func (a *Adapter) saveState(inv gres.Inventory) {
	path := a.cfg.StateFile
	if path == "" {
		return
	}
	b, err := protojson.Marshal(api.InventoryToProto(inv))
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		tmp := path + ".tmp"
		if err = os.WriteFile(tmp, b, 0o644); err == nil {
			err = os.Rename(tmp, path)
		}
	}
	if err != nil {
		a.log.Warn("adapter inventory not kept for the next start", "file", path, "err", err)
	}
}

// loadState reads the inventory kept by saveState; none (and no error)
// when there is no file.
func (a *Adapter) loadState() (gres.Inventory, bool, error) {
	path := a.cfg.StateFile
	if path == "" {
		return gres.Inventory{}, false, nil
	}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return gres.Inventory{}, false, nil
	}
	if err != nil {
		return gres.Inventory{}, false, err
	}
	var p pb.Inventory
	if err := protojson.Unmarshal(b, &p); err != nil {
		return gres.Inventory{}, false, fmt.Errorf("%s: %w", path, err)
	}
	inv, err := api.InventoryFromProto(&p)
	if err != nil {
		return gres.Inventory{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return inv, true, nil
}

// registerLocked makes inv the registered devices. a.mu is held.
func (a *Adapter) registerLocked(inv gres.Inventory) {
	a.inv = inv
	a.registered, a.order = map[string]gres.Device{}, nil
	for _, d := range inv.Devices {
		a.registered[d.UUID] = d
		a.order = append(a.order, d.UUID)
	}
}

// startAbsent is Attach's failure: the devices kept from the last start
// are registered (and drained by the supervisor when it starts, naming
// why), or none when there are none kept.
func (a *Adapter) startAbsent(why string) {
	inv, ok, err := a.loadState()
	if err != nil {
		a.log.Warn("the inventory kept from the last start is unreadable; the node starts without the adapter's devices", "err", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reason, a.downSince = why, a.cfg.Clock.Now()
	if !ok {
		return
	}
	a.registerLocked(inv)
	a.absentAtStart = true
	a.log.Warn("adapter absent at start: its devices from the last start are registered drained until it answers",
		"devices", len(inv.Devices), "why", why)
}

// drainAbsent drains, once, the devices registered from the last start
// of an adapter that was absent at this one.
func (a *Adapter) drainAbsent(emit func(gres.Condition)) {
	a.mu.Lock()
	if !a.absentAtStart {
		a.mu.Unlock()
		return
	}
	a.absentAtStart = false
	uuids, why, now := append([]string(nil), a.order...), a.reason, a.cfg.Clock.Now()
	a.mu.Unlock()
	msg := fmt.Sprintf("adapter %s: not up at the agent's start (%s); its devices return when it answers", a.cfg.Policy.Target, why)
	for _, u := range uuids {
		emit(a.drainCondition(u, AdapterAbsent, msg, now))
	}
}

// adopt registers the inventory of an adapter seen for the first time
// while the agent runs (absent at its start, nothing kept from before),
// and tells the agent to register the node again with the devices.
func (a *Adapter) adopt(inv gres.Inventory) bool {
	a.mu.Lock()
	if len(a.order) > 0 || len(inv.Devices) == 0 {
		a.mu.Unlock()
		return false
	}
	a.registerLocked(inv)
	a.mu.Unlock()
	a.saveState(inv)
	a.log.Info("adapter up after the agent's start: its devices join the node", "devices", len(inv.Devices))
	select {
	case a.grew <- struct{}{}:
	default:
	}
	return true
}

// InventoryGrew is signalled when the adapter's registered devices grew
// while the agent runs (see adopt): the agent registers the node again.
func (a *Adapter) InventoryGrew() <-chan struct{} { return a.grew }
