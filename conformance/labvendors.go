package conformance

import (
	"slices"
	"sort"

	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

// labVendors groups the lab's nodes by vendor and finds how to reach each
// group: a partition holding them all and a feature only they carry.
func labVendors(c *cluster.Cluster) []VendorTarget {
	byVendor := map[string][]*cluster.Node{}
	var order []string
	for _, n := range c.Nodes() {
		v := CPUVendor
		if len(n.Inventory.Devices) > 0 {
			v = n.Inventory.Devices[0].Vendor
		}
		if _, ok := byVendor[v]; !ok {
			order = append(order, v)
		}
		byVendor[v] = append(byVendor[v], n)
	}
	features := map[string][]string{}
	for _, n := range c.Lab.NodeList() {
		features[n.Name] = n.Features
	}
	var out []VendorTarget
	for _, v := range order {
		nodes := byVendor[v]
		vt := VendorTarget{Name: v}
		for _, n := range nodes {
			vt.Nodes = append(vt.Nodes, n.Name)
		}
		sort.Strings(vt.Nodes)
		first := nodes[0]
		vt.GPUsPerNode = len(first.Inventory.Devices)
		if vt.GPUsPerNode > 0 {
			vt.GPUType = first.Inventory.Devices[0].Type
		}
		vt.Info = accelInfo(first.Machine.Drivers, vt.HasGPUs())
		vt.Partition = partitionFor(c.Lab, vt.Nodes)
		vt.Feature = featureFor(features, vt.Nodes)
		out = append(out, vt)
	}
	return out
}

// accelInfo is the accelerator driver's Info (the first driver of a
// machine with accelerators), else the host driver's.
func accelInfo(drivers []vendors.Driver, gpus bool) vendors.Info {
	if len(drivers) == 0 {
		return vendors.Info{}
	}
	if gpus {
		return drivers[0].Info()
	}
	return drivers[len(drivers)-1].Info()
}

func partitionFor(lab *labfile.Lab, nodes []string) string {
	for _, p := range lab.Partitions {
		names, err := topology.ExpandHostlist(p.Nodes)
		if err != nil {
			continue
		}
		if all(nodes, func(n string) bool { return slices.Contains(names, n) }) {
			return p.Name
		}
	}
	return ""
}

func featureFor(features map[string][]string, nodes []string) string {
	for _, f := range features[nodes[0]] {
		mine := all(nodes, func(n string) bool { return slices.Contains(features[n], f) })
		only := true
		for n, fs := range features {
			if !slices.Contains(nodes, n) && slices.Contains(fs, f) {
				only = false
			}
		}
		if mine && only {
			return f
		}
	}
	return ""
}

func all(xs []string, ok func(string) bool) bool {
	for _, x := range xs {
		if !ok(x) {
			return false
		}
	}
	return true
}
