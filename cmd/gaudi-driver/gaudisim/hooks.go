package gaudisim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Statuses the driver's status attribute shows (sysfs-driver-habanalabs;
// sysfs.c upper-cases the first letter of the driver's status string).
const (
	StatusOperational = "Operational"
	StatusInReset     = "In reset"
	StatusDisabled    = "Disabled"
	StatusNeedsReset  = "Needs reset"
	StatusInRelease   = "In reset after device release"
)

// card returns the card whose compute node is accelN.
func (m *Machine) card(accel int) (Card, error) {
	for _, c := range m.Cards {
		if c.Accel == accel {
			return c, nil
		}
	}
	return Card{}, fmt.Errorf("gaudisim: no card accel%d under %s", accel, m.Root)
}

// SetStatus writes a card's status attribute, as the driver changes it
// when the card needs a reset or is disabled.
func (m *Machine) SetStatus(accel int, status string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.card(accel)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(c.DeviceDir, "status"), status+"\n")
}

// HardReset counts one hard reset of a card, as the driver does after a
// fatal error (the card is back to Operational afterwards).
func (m *Machine) HardReset(accel int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.card(accel)
	if err != nil {
		return err
	}
	path := filepath.Join(c.DeviceDir, "hard_reset_cnt")
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("gaudisim: accel%d hard_reset_cnt: %w", accel, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("gaudisim: accel%d hard_reset_cnt holds %q: %w", accel, b, err)
	}
	return writeAtomic(path, strconv.Itoa(n+1)+"\n")
}

// SetSensors writes a card's temperature (°C) and power (W) readings.
func (m *Machine) SetSensors(accel int, tempC, powerW float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.card(accel)
	if err != nil {
		return err
	}
	if c.HwmonDir == "" {
		return fmt.Errorf("gaudisim: accel%d has no hwmon directory", accel)
	}
	if err := writeAtomic(filepath.Join(c.HwmonDir, "temp1_input"), strconv.Itoa(int(tempC*1000))+"\n"); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(c.HwmonDir, "power1_input"), strconv.Itoa(int(powerW*1e6))+"\n")
}

// Remove takes a card off the bus: its class entries and device directory
// go, as on a surprise removal or a failed PCIe link.
func (m *Machine) Remove(accel int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.card(accel)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range []string{
		filepath.Join(m.Root, "sys/class/accel", fmt.Sprintf("accel%d", accel)),
		filepath.Join(m.Root, "sys/class/accel", fmt.Sprintf("accel_controlD%d", accel)),
	} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, os.RemoveAll(c.DeviceDir))
	return errors.Join(errs...)
}

// SetLoad sets what the driver's INFO ioctl would report for a card: its
// utilisation (percent) and the HBM in use (bytes).
func (m *Machine) SetLoad(accel int, utilPct int, usedBytes uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.card(accel); err != nil {
		return err
	}
	if utilPct < 0 || utilPct > 100 {
		return fmt.Errorf("gaudisim: utilisation %d%% of accel%d is not a percentage", utilPct, accel)
	}
	hbm := families[m.Config.Family].hbm
	if usedBytes > hbm {
		return fmt.Errorf("gaudisim: accel%d: %d bytes used of %d", accel, usedBytes, hbm)
	}
	dir := filepath.Join(m.Root, MeterDir, fmt.Sprintf("accel%d", accel))
	if err := writeAtomic(filepath.Join(dir, "utilization"), strconv.Itoa(utilPct)+"\n"); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, "dram_free"), strconv.FormatUint(hbm-usedBytes, 10)+"\n")
}

// RaiseEvent counts one occurrence of the ASIC's event id on a card, as the
// driver does for every event the firmware reports (gaudi2.c
// gaudi2_handle_eqe: events_stat_aggregate[event_type]++). Which ids are
// ECC errors is the adapter's knowledge, not the simulator's.
func (m *Machine) RaiseEvent(accel, id int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.card(accel); err != nil {
		return err
	}
	path := filepath.Join(m.Root, MeterDir, fmt.Sprintf("accel%d", accel), EventsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("gaudisim: accel%d has no event counters: %w", accel, err)
	}
	if id < 0 || 4*id+4 > len(b) {
		return fmt.Errorf("gaudisim: accel%d: event id %d out of range 0..%d", accel, id, len(b)/4-1)
	}
	binary.LittleEndian.PutUint32(b[4*id:], binary.LittleEndian.Uint32(b[4*id:])+1)
	return writeAtomic(path, string(b))
}
