// Command gaudi-driver is an out-of-tree vendor adapter for Intel Gaudi
// accelerators: it reads the habanalabs kernel driver's accel sysfs and
// device nodes and serves them to Parity's node agent over vendors/plugin.
// Like cmd/example-driver it imports only public packages (gres, topology,
// vendors, vendors/plugin) and its own simulator (gaudisim); `parity
// conform driver --plugin unix:///path.sock` certifies it.
//
// Where the hardware's layout comes from (public material only):
//
//   - Attributes under /sys/class/accel/accel<n>/device/: device_type,
//     module_id, pci_addr, status and its values, hard_reset_cnt,
//     driver_ver, cpucp_ver, max_power — Documentation/ABI/testing/
//     sysfs-driver-habanalabs and drivers/accel/habanalabs/common/sysfs.c
//     (HabanaAI/drivers.accel.habanalabs.kernel; status upper-cases the
//     first letter, module_id is the firmware's card_location).
//   - PCI identity: vendor 0x1da3, device 0x1000 (Gaudi), 0x1020 (Gaudi 2),
//     0x1060 (Gaudi 3) — habanalabs_drv.c's PCI id table. numa_node and
//     local_cpulist are the PCI core's attributes of the same directory.
//   - Sensors: hwmon under the PCI device (common/hwmon.c), in the hwmon
//     ABI's units; that temp1 is the die sensor is an assumption.
//   - Device nodes: /dev/accel/accel<n> with the accel major 261
//     (include/drm/drm_accel.h) and minor n, and a control node
//     /dev/accel/accel_controlD<n> on the driver's own dynamic major
//     (common/device.c); the adapter reads both numbers from each node's
//     sysfs dev file rather than assuming them.
//   - HABANA_VISIBLE_DEVICES: Habana's container runtime (HabanaAI/
//     habana-container-runtime, specs.go filterDevicesByENV) reads it as
//     accel indices ("all" or "0,1,..."), matched to /dev/accel/accel<n>
//     and accel_controlD<n>; module ids it does not take (that code is
//     commented out there). The Kubernetes device plugin (HabanaAI/
//     habanalabs-k8s-device-plugin, habanalabs.go Allocate) sets it to the
//     cards' minors and HABANA_VISIBLE_MODULES to their module ids; the
//     frameworks pick cards by HABANA_VISIBLE_MODULES (docs.habana.ai,
//     PyTorch Gaudi-to-process Assignment). See Prepare for the choice.
//   - Fabric: every Gaudi 2 has 24 × 100 GbE RoCE ports on chip; on an
//     HLS-2 board 21 join the eight cards all-to-all, three to each peer,
//     and 3 go out (docs.habana.ai Network Configuration: 21 × 12.5 GB/s
//     scale-up per card). Gaudi 3 does the same at 200 Gb/s; first-
//     generation Gaudi (HLS-1) uses 7 of its 10 ports, one per peer
//     (habana.ai, "Gaudi integrated RoCE"). sysfs does not show this
//     wiring, so the adapter derives it from the family: fabric.go.
//   - HBM per card: 32 GB (Gaudi), 96 GB (Gaudi 2), 128 GB (Gaudi 3), and
//     board power 400/600/900 W: the generations table of Intel's Gaudi 3
//     talk (Hot Chips, August 2024). sysfs has neither
//     memory use nor utilisation; the adapter asks the driver as hl-smi
//     does, by the INFO ioctl on the control node (HL_INFO_DEVICE_UTILIZATION,
//     HL_INFO_DRAM_USAGE; include/uapi/drm/habanalabs_accel.h, and
//     habanalabs_ioctl.c, which serves INFO on the control node): meter.go.
//   - ECC error counts: the driver counts every event the firmware reports
//     per event id (INFO op HL_INFO_HW_EVENTS_AGGREGATE, since the driver
//     loaded, as dcgm-exporter's volatile counters are); the ASIC's ECC
//     events are the *_SERR (corrected) and *_DERR (uncorrectable) ids of
//     drivers/accel/habanalabs/include/gaudi{,2}/gaudi{,2}_async_events.h:
//     ecc.go.
//
// Where the public material is silent (assumptions, marked where used):
// no sysfs attribute holds a card serial or UUID (hl-smi reads them from
// firmware through the control node), so a card's UUID derives from the
// host's /etc/machine-id and its PCI address — stable across restarts,
// but it follows the slot, not the card; the PCIe switch is the root port
// the card hangs off; Gaudi 3's event ids are not in the upstream kernel,
// so its ECC counts are reported as not measured. The INFO ioctl path is
// written from the uapi header and has not met a card: on the simulator,
// whose nodes cannot answer ioctls, the adapter reads gaudisim's stand-in
// files instead (--sim only).
package main
